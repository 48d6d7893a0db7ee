"""The arch seam, checked by the compiler: `make cross-check` compiles every user/ source
for aarch64 (Debian's gcc-aarch64-linux-gnu; compile only, see the Makefile) against exact
mode's arm64 folder, a stub that refuses.  A register name, an instruction or an x86-only
header left in a generic file fails here.  Fresh objects each run (~15 s on 2 cores)."""
import os
import re
import subprocess
import tempfile

import harness

EXACT = os.path.join(harness.ROOT, "user", "exact")
# x86-64 register names as a generic file would write them (a field, or %reg in asm).
X86_REGS = re.compile(r"(->|\.|%)(rip|rsp|rbp|rax|rbx|rcx|rdx|rsi|rdi|r8|r9|r1[0-5]|"
                      r"orig_rax|eax|eflags)\b")


def test_user_sources_compile_for_arm64():
    with tempfile.TemporaryDirectory(prefix="mevitop-cross-") as out:
        r = subprocess.run(["make", "-C", harness.ROOT, "--no-print-directory", "-j2",
                            "cross-check", f"BUILD={os.path.relpath(harness.BUILD, harness.ROOT)}",
                            f"CROSS_BUILD={out}"],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        srcs = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(harness.ROOT, "user"))
                for f in fs if f.endswith(".c") and ("/arch/" not in d or d.endswith("arm64"))]
        objs = [os.path.join(d, f) for d, _, fs in os.walk(out) for f in fs if f.endswith(".o")]
        assert len(objs) == len(srcs), (sorted(objs), sorted(srcs))
        head = subprocess.run(["readelf", "-h", objs[0]], capture_output=True, text=True).stdout
        assert "AArch64" in head, head


def test_generic_exact_files_name_no_register():
    bad = []
    for f in sorted(os.listdir(EXACT)):
        if f.endswith((".c", ".h")):
            for n, line in enumerate(open(os.path.join(EXACT, f)), 1):
                if X86_REGS.search(line):
                    bad.append(f"user/exact/{f}:{n}: {line.strip()}")
    assert not bad, "\n".join(bad)
