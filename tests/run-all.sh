#!/usr/bin/env bash
# Runs every test: unit tests (cmocka, ASan/UBSan build), then the integration tests
# (pytest: the real BPF programs, the real UI in tmux, the real ptrace/userfaultfd path).
# Prints one closing line: "total: N passed, N failed, N skipped".
# As root (CI), a skipped test is a failure: everything must run there.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SANBUILD=${SANBUILD:-$BUILD-san}
PY=${PYTHON:-/usr/bin/python3}
passed=0 failed=0 skipped=0

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

echo "== unit tests"
for t in "$SANBUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	if out=$("$t" 2>&1); then
		echo "PASS $name"
		passed=$((passed + 1))
	else
		# The seed and the failed assertion first: a sanitizer's leak report after a
		# failed assertion would push them out of the tail.
		echo "$out" | grep -E 'MEVITOP_TEST_SEED|\[  ERROR|\[   LINE|\[  FAILED' | head -20
		echo "$out" | tail -40
		echo "FAIL $name"
		failed=$((failed + 1))
	fi
done

echo "== integration tests"
junit=$(mktemp)
MEVITOP_BUILD=$PWD/$BUILD MEVITOP_BIN=$PWD/$SANBUILD/mevitop \
	"$PY" -m pytest -q -rs -p no:cacheprovider --junitxml="$junit" tests/integration "$@"
counts=$("$PY" - "$junit" <<'PYEOF'
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
s = r if r.tag == "testsuite" else r.find("testsuite")
t, f, e, sk = (int(s.get(k, 0)) for k in ("tests", "failures", "errors", "skipped"))
print(t - f - e - sk, f + e, sk)
# Where the suite's time goes (it has a ~10 minute budget): the slowest files, on stderr.
by = {}
for c in r.iter("testcase"):
    k = c.get("classname", "").rsplit(".", 1)[-1]
    by[k] = by.get(k, 0.0) + float(c.get("time", 0))
top = sorted(by.items(), key=lambda kv: -kv[1])[:12]
print("slowest files: " + ", ".join(f"{k} {v:.0f}s" for k, v in top), file=sys.stderr)
PYEOF
)
rm -f "$junit"
read -r p f s <<<"$counts"
passed=$((passed + ${p:-0}))
failed=$((failed + ${f:-1}))
skipped=$((skipped + ${s:-0}))

if [ "$(id -u)" = 0 ] && [ "$skipped" -gt 0 ] && [ -z "${MEVITOP_ALLOW_SKIPS:-}" ]; then
	echo "running as root, yet $skipped tests were skipped: each must run here (see the reasons above)"
	failed=$((failed + skipped))
fi
echo "total: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
