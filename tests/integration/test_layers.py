"""The folders of user/ are layers, and the built objects show who calls whom.  (And no file of
user/ over 1,000 lines, no function over 120.)

From `nm` on every object of build/user/ (a symbol defined in file A and undefined in file B
means B calls A, or reads A's data) this builds the file-level call graph and checks:
  - no cycle between files: every strongly connected component has one file;
  - a folder calls only the folders below it (LAYERS);
  - no header in one folder declares a function or variable defined in another folder's .c;
  - no hub header: a header that declares the functions of several .c files is named after
    them (X.h for X.c and X_*.c: one module in parts), or is its folder's interface (F/F.h)
    or its folder's internal header (F/F_int.h);
  - and, from the sources, since a type or a macro is used without any call nm could see:
    a file includes only headers of its own folder and of the folders below it.
  - and one prefix per file: a file's external functions are named for it (PREFIX_ALIASES).
The objects are the ones `make` builds (harness.BUILD, i.e. $MEVITOP_BUILD); only objects
whose source still exists count, so a stale object of a deleted file cannot hide a change.
"""
import collections
import functools
import glob
import os
import re
import subprocess

import harness

USER = os.path.join(harness.ROOT, "user")

# Who may call whom, from what the folders mean.  "top" is user/main.c and user/cli.c.
LAYERS = {
    "lib": set(),                           # no mevitop types, no I/O: nothing of ours
    "model": {"lib"},                       # data only
    "kernel": {"lib"},                      # asks the kernel; model only if it had to
    "stacks": {"lib", "model", "kernel"},   # stack attribution, fed by the engine
    "engine": {"lib", "model", "kernel", "stacks"},
    "out": {"lib", "model", "kernel", "stacks", "engine"},      # JSON, metrics: read the engine
    "exact": {"lib", "model", "kernel", "stacks", "engine", "out"},  # a mode with its own loop
    "rec": {"lib", "model", "kernel", "stacks", "engine", "out"},    # recordings of frames
    "ui": {"lib", "model", "kernel", "stacks", "engine", "rec"},     # live engine or recording
    "top": {"lib", "model", "kernel", "stacks", "engine", "out", "exact", "rec", "ui"},
}

# Violations known today, each with its owner and why; anything else fails.  Empty now: an
# entry needs a reason to exist.  (caller, callee) files.
KNOWN_CYCLES = []
KNOWN_CALLS = {
}
KNOWN_HEADERS = {
}
KNOWN_HUBS = {
}
# (including file, included header): types one layer borrows from a layer above it.
KNOWN_INCLUDES = {
}


def folder(path):
    """'lib' for user/lib/x.c, 'top' for user/main.c (paths relative to the root); a
    folder's subfolders are its own (user/exact/arch/x86/x.c is 'exact')."""
    parts = path.split("/")
    return parts[1] if len(parts) >= 3 else "top"


def objects(build):
    """{source path relative to the root: object path} of every built user/ object."""
    found = {}
    for o in glob.glob(os.path.join(build, "user", "*.o")) + \
            glob.glob(os.path.join(build, "user", "*", "*.o")) + \
            glob.glob(os.path.join(build, "user", "*", "arch", "*", "*.o")):
        src = os.path.join("user", os.path.relpath(o, os.path.join(build, "user")))[:-2] + ".c"
        if os.path.exists(os.path.join(harness.ROOT, src)):
            found[src] = o
    return found


def symbols(objs):
    """(defined: {symbol: source}, undefined: {source: {symbol}}) from nm."""
    defined, undefined = {}, collections.defaultdict(set)
    for src, o in sorted(objs.items()):
        out = subprocess.run(["nm", "-P", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            name, kind = line.split()[:2]
            if kind == "U":
                undefined[src].add(name)
            elif kind.isupper() and kind not in "VW":   # global, not weak
                defined[name] = src
    return defined, undefined


def call_graph(defined, undefined):
    """{caller: {callee: [symbols]}} between distinct files."""
    g = collections.defaultdict(lambda: collections.defaultdict(list))
    for src, names in undefined.items():
        for n in sorted(names):
            if n in defined and defined[n] != src:
                g[src][defined[n]].append(n)
    return g


def components(g):
    """Strongly connected components with more than one file (Tarjan, iterative)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    nodes = sorted(set(g) | {b for v in g.values() for b in v})
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(g.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def cycle_errors(g):
    errs = []
    for comp in components(g):
        if comp in KNOWN_CYCLES:
            continue
        calls = [f"  {a} -> {b} ({', '.join(g[a][b][:3])})"
                 for a in sorted(comp) for b in sorted(g.get(a, ())) if b in comp]
        errs.append(f"files calling each other ({len(comp)}):\n" + "\n".join(calls))
    return errs


def layer_errors(g):
    errs = []
    for a in sorted(g):
        for b, names in sorted(g[a].items()):
            fa, fb = folder(a), folder(b)
            if fa == fb or fb in LAYERS[fa] or (a, b) in KNOWN_CALLS:
                continue
            errs.append(f"{a} ({fa}) calls up into {b} ({fb}): {', '.join(names)}")
    return errs


def declared(path):
    """Names a header declares: functions and extern variables outside any braces, macros
    and comments (a static inline body or a struct's function pointers declare nothing)."""
    t = open(path).read()
    t = re.sub(r"/\*.*?\*/", " ", t, flags=re.S)
    t = re.sub(r"//[^\n]*", " ", t)
    t = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", t, flags=re.M)
    prev = None
    while prev != t:
        prev, t = t, re.sub(r"\{[^{}]*\}", ";", t)
    names = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", t))
    for stmt in re.findall(r"\bextern\b([^;(]*);", t):  # extern T a, *b, c[N];
        for part in re.sub(r"\[[^\]]*\]|=[^,]*", "", stmt).split(","):
            names |= set(re.findall(r"([A-Za-z_]\w*)\s*$", part))
    return names


def headers():
    """{header path relative to the root: the names it declares}."""
    found = glob.glob(os.path.join(USER, "*.h")) + glob.glob(os.path.join(USER, "*", "*.h")) + \
        glob.glob(os.path.join(USER, "*", "arch", "*", "*.h"))
    return {os.path.relpath(h, harness.ROOT): declared(h) for h in found}


def header_errors(defined, decls):
    errs = []
    for rel, names in sorted(decls.items()):
        by_src = collections.defaultdict(list)
        for n in names:
            if n in defined and folder(defined[n]) != folder(rel):
                by_src[defined[n]].append(n)
        for src, names in sorted(by_src.items()):
            if (rel, src) not in KNOWN_HEADERS:
                errs.append(f"{rel} ({folder(rel)}) declares {src}'s "
                            f"{', '.join(sorted(names))}")
    return errs


def parts_of(header):
    """May this header declare the functions of file src?  (The hub rule.)"""
    stem = os.path.basename(header)[:-2]
    where = folder(header)

    def ok(src):
        name = os.path.basename(src)[:-2]
        return (name == stem or name.startswith(stem + "_") or stem in (where, where + "_int"))
    return ok


def hub_errors(defined, decls):
    errs = []
    for rel, names in sorted(decls.items()):
        srcs = {defined[n] for n in names if n in defined and folder(defined[n]) == folder(rel)}
        ok = parts_of(rel)
        if len(srcs) > 1 and rel not in KNOWN_HUBS and not all(map(ok, srcs)):
            errs.append(f"{rel} declares the functions of {len(srcs)} files: "
                        f"{', '.join(sorted(srcs))}")
    return errs


INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def include_edges(files):
    """[(file, header)] for every #include "..." of ours in files ({path: text}, paths
    relative to the root): a qualified name ("engine/engine.h") is found under user/, a bare
    one in the including file's folder first, then wherever one header of that name is (the
    Makefile puts every folder on the include path).  Headers of bpf/ and the build are not
    ours to check."""
    by_name = collections.defaultdict(list)
    for path in files:
        if path.endswith(".h"):
            by_name[os.path.basename(path)].append(path)
    edges = []
    for path, text in sorted(files.items()):
        for inc in INCLUDE.findall(text):
            here = os.path.join(os.path.dirname(path), inc)
            if "/" in inc and os.path.join("user", inc) in files:
                edges.append((path, os.path.join("user", inc)))
            elif here in files:
                edges.append((path, here))
            elif len(by_name.get(inc, ())) == 1:
                edges.append((path, by_name[inc][0]))
    return edges


def include_errors(edges):
    errs = []
    for a, h in edges:
        fa, fh = folder(a), folder(h)
        if fa == fh or fh in LAYERS[fa] or (a, h) in KNOWN_INCLUDES:
            continue
        errs.append(f"{a} ({fa}) includes {h} ({fh}), a layer above it")
    return errs


def style_errors(files):
    """One include style: a header of ours under user/ is named from user/ ("engine/engine.h",
    "cli.h"), never bare from a sibling, so a reader sees the layer it comes from.  The arch
    headers stay bare on purpose: the Makefile picks user/exact/arch/ARCH by -I."""
    ours = {os.path.relpath(p, "user") for p in files if p.endswith(".h") and "/arch/" not in p}
    errs = []
    for path, text in sorted(files.items()):
        for inc in INCLUDE.findall(text):
            if inc not in ours and any(o.endswith("/" + inc) for o in ours):
                errs.append(f"{path} includes \"{inc}\": name it from user/")
    return errs


def sources():
    paths = glob.glob(os.path.join(USER, "*.[ch]")) + glob.glob(os.path.join(USER, "*", "*.[ch]")) + \
        glob.glob(os.path.join(USER, "*", "arch", "*", "*.[ch]"))
    return {os.path.relpath(p, harness.ROOT): open(p).read() for p in paths}


@functools.lru_cache(maxsize=None)
def graph():
    objs = objects(harness.BUILD)
    sources = glob.glob(os.path.join(USER, "*.c")) + glob.glob(os.path.join(USER, "*", "*.c"))
    missing = sorted(os.path.relpath(s, harness.ROOT) for s in sources
                     if os.path.relpath(s, harness.ROOT) not in objs)
    assert not missing, f"not built (run make): {missing}"
    stale = sorted(src for src, o in objs.items()
                   if os.path.getmtime(os.path.join(harness.ROOT, src)) > os.path.getmtime(o))
    assert not stale, f"objects older than their source (run make): {stale}"
    defined, undefined = symbols(objs)
    return defined, call_graph(defined, undefined)


def test_no_file_calls_back_into_its_caller():
    _, g = graph()
    errs = cycle_errors(g)
    assert not errs, "\n".join(errs)


def test_layers_only_call_downwards():
    _, g = graph()
    assert set(map(folder, g)) <= set(LAYERS), "a folder missing from LAYERS"
    errs = layer_errors(g)
    assert not errs, "\n".join(errs)


def test_no_header_declares_another_folders_functions():
    defined, _ = graph()
    errs = header_errors(defined, headers())
    assert not errs, "\n".join(errs)


def test_no_hub_header():
    defined, _ = graph()
    errs = hub_errors(defined, headers())
    assert not errs, "\n".join(errs)


def test_includes_only_reach_down():
    errs = include_errors(include_edges(sources()))
    assert not errs, "\n".join(errs)


def test_one_include_style():
    errs = style_errors(sources())
    assert not errs, "\n".join(errs)


def test_every_known_violation_is_still_there():
    """An exception fixed elsewhere goes from the lists, so it cannot come back unseen."""
    defined, g = graph()
    decls = headers()
    gone = [c for c in KNOWN_CYCLES if c not in components(g)]
    gone += [(a, b) for a, b in KNOWN_CALLS if b not in g.get(a, {})]
    gone += [(h, src) for h, src in KNOWN_HEADERS
             if not any(defined.get(n) == src for n in decls.get(h, ()))]
    gone += [h for h in KNOWN_HUBS
             if len({defined[n] for n in decls.get(h, ()) if n in defined}) < 2]
    gone += sorted(set(KNOWN_INCLUDES) - set(include_edges(sources())))
    assert not gone, f"fixed: remove from test_layers.py's KNOWN_*: {gone}"


def test_the_checks_can_fail():
    """Each check reports a planted violation (so a passing run means something)."""
    g = {"user/ui/a.c": {"user/ui/b.c": ["b_f"]}, "user/ui/b.c": {"user/ui/a.c": ["a_f"]},
         "user/lib/x.c": {"user/engine/y.c": ["y_f"]}}
    assert cycle_errors(g) and "user/ui/a.c -> user/ui/b.c (b_f)" in cycle_errors(g)[0]
    assert layer_errors(g) == ["user/lib/x.c (lib) calls up into user/engine/y.c (engine): y_f"]
    assert components({"a": {"b": []}, "b": {"c": []}, "c": {}}) == []
    defined = {"y_f": "user/engine/y.c", "a_f": "user/ui/a.c", "b_f": "user/ui/b.c",
               "a_g": "user/ui/a_part.c"}
    assert header_errors(defined, {"user/lib/x.h": {"y_f", "printf"}}) == \
        ["user/lib/x.h (lib) declares user/engine/y.c's y_f"]
    # ui_state.h used to declare the functions of five files.
    assert hub_errors(defined, {"user/ui/state.h": {"a_f", "b_f"}}) == \
        ["user/ui/state.h declares the functions of 2 files: user/ui/a.c, user/ui/b.c"]
    assert hub_errors(defined, {"user/ui/a.h": {"a_f", "a_g"}, "user/ui/ui.h": {"a_f", "b_f"},
                                "user/ui/ui_int.h": {"a_f", "b_f"}}) == []
    src = ("int f(int a);\nextern const struct k g_k, *g_l, g_m[4];\n"
           "static inline int h(void) { return f(1); }\n"
           "#define M(x) m(x)\nstruct s { int (*cb)(int); };\n/* c(void); */\n")
    files = {"user/model/m.h": '#include "kernel/k.h"\n#include "lib.h"\n',
             "user/kernel/k.h": '#include "m.h"\n', "user/lib/lib.h": "",
             "user/ui/v.c": '# include "../model/m.h"\n#include "e.h"\n',
             "user/engine/e.h": "", "user/cli.h": ""}
    assert include_errors(include_edges(files)) == [
        "user/kernel/k.h (kernel) includes user/model/m.h (model), a layer above it",
        "user/model/m.h (model) includes user/kernel/k.h (kernel), a layer above it"]
    assert ("user/ui/v.c", "user/engine/e.h") in include_edges(files)
    assert style_errors(files) == ['user/kernel/k.h includes "m.h": name it from user/',
                                   'user/model/m.h includes "lib.h": name it from user/',
                                   'user/ui/v.c includes "e.h": name it from user/']
    path = os.path.join(harness.BUILD, "test_layers_declared.h")
    with open(path, "w") as f:
        f.write(src)
    try:
        assert declared(path) == {"f", "h", "g_k", "g_l", "g_m"}
    finally:
        os.unlink(path)


MAX_FILE_LINES = 1000
MAX_FUNCTION_LINES = 120


def length_errors(files):
    """Files of user/ over MAX_FILE_LINES lines, and functions over MAX_FUNCTION_LINES (from
    the line that names a function at column 0 to its closing brace at column 0)."""
    errs = []
    for path, text in sorted(files.items()):
        lines = text.split("\n")
        if len(lines) - 1 > MAX_FILE_LINES:
            errs.append(f"{path}: {len(lines) - 1} lines (at most {MAX_FILE_LINES})")
        start = name = None
        for i, line in enumerate(lines):
            if re.match(r"[A-Za-z].*\(", line) and not line.rstrip().endswith(";"):
                start, name = i, re.search(r"(\w+)\s*\(", line).group(1)
            elif line.startswith("}") and start is not None:
                if i - start > MAX_FUNCTION_LINES:
                    errs.append(f"{path}: {name} has {i - start} lines "
                                f"(at most {MAX_FUNCTION_LINES})")
                start = None
    return errs


def test_files_and_functions_stay_short():
    errs = length_errors({p: t for p, t in sources().items() if p.endswith(".c")})
    assert not errs, "\n".join(errs)
    long_fn = "int f(void)\n{\n" + "\tx();\n" * 130 + "}\n"
    assert length_errors({"user/lib/a.c": long_fn, "user/lib/b.c": "x;\n" * 1001}) == [
        "user/lib/a.c: f has 132 lines (at most 120)",
        "user/lib/b.c: 1001 lines (at most 1000)"]


def test_every_unit_test_names_what_it_links():
    """Each tests/unit/test_X.c has a test_X_LINK in the Makefile (the folders it tests and
    those they stand on, issue 12's item 2); without one it would link every folder, so a
    call into a layer it should not need would go unnoticed."""
    with open(os.path.join(harness.ROOT, "Makefile")) as f:
        linked = set(re.findall(r"^(test_\w+)_LINK\s*:=", f.read(), re.M))
    tests = {os.path.basename(p)[:-2]
             for p in glob.glob(os.path.join(harness.ROOT, "tests", "unit", "test_*.c"))}
    assert tests and not tests - linked, f"no test_X_LINK in the Makefile: {sorted(tests - linked)}"
    assert not linked - tests, f"test_X_LINK of no unit test: {sorted(linked - tests)}"


# --- One prefix per file, named for the file (issue 25's item 3) ---
# The external functions of user/F/S.c are named for it, so a reader finds a function's file
# from its name: S_* (or S itself); the stem without its folder's name (ui/ui_canvas.c:
# canvas_*, the folder already says ui); a module S is a part of (files_keys.c beside files.c
# or files.h: files_*, the hub rule's X.h for X.c and X_*.c); or the folder's own name, the
# layer's namespace (engine/drive.c's engine_drive, rec/rec_reader.c's rec_open).
# Short names a module uses instead, each with its reason ({path start: prefix}):
PREFIX_ALIASES = {
    "user/exact/inject": "inj",         # inject*.c: the injector's verbs (inj_seize, inj_syscall)
    "user/exact/inject_maps": "injmap",  # the injector's view of the target's maps
    "user/exact/arch/": "arch",         # each arch folder fills exact/arch.h's arch_* seam
}
# Names that are not ours to choose: main, libbpf's own functions, which kernel/kbtf.c
# defines so that libbpf's calls bind to them (kbtf.h says why), and libmicrohttpd's, which
# lib/mhd_lazy.c defines so that user/out's calls bind to them (it opens the library only
# when a server starts: linked, it and GnuTLS cost every session ~2.5 MiB).
PREFIX_FREE = {"main", "btf__free", "btf__load_vmlinux_btf",
               "MHD_add_response_header", "MHD_create_response_from_buffer",
               "MHD_create_response_from_callback", "MHD_destroy_response",
               "MHD_get_connection_info", "MHD_lookup_connection_value", "MHD_queue_response",
               "MHD_resume_connection", "MHD_start_daemon", "MHD_stop_daemon",
               "MHD_suspend_connection"}
# Debt: functions named otherwise, {file: {function}}.  Empty: a new exception must be written
# here, where a reviewer sees it, and goes when its file is renamed or split.
KNOWN_PREFIXES = {}


def prefixes(src, paths):
    """The prefixes user/F/.../S.c may give its external functions (paths: every file of user/,
    relative to the root, to find the modules S is a part of)."""
    stem, where = os.path.basename(src)[:-2], folder(src)
    found = {stem, where} if where != "top" else {stem}
    if stem.startswith(where + "_"):
        found.add(stem[len(where) + 1:])
    bits = stem.split("_")
    for i in range(1, len(bits)):
        mod = os.path.join(os.path.dirname(src), "_".join(bits[:i]))
        if mod + ".c" in paths or mod + ".h" in paths:
            found.add("_".join(bits[:i]))
    found |= {p for start, p in PREFIX_ALIASES.items() if src.startswith(start)}
    return found


def function_defs(objs):
    """{source: {external function it defines}} from nm (T: text, global)."""
    out = {}
    for src, o in sorted(objs.items()):
        nm = subprocess.run(["nm", "-P", "--defined-only", o], capture_output=True, text=True,
                            check=True).stdout
        out[src] = {l.split()[0] for l in nm.splitlines() if l.split()[1] == "T"}
    return out


def prefix_errors(defs, paths, known=None):
    """Functions of defs ({source: {name}}) that no prefix of their file names."""
    known = KNOWN_PREFIXES if known is None else known
    errs = []
    for src, names in sorted(defs.items()):
        ok = prefixes(src, paths)
        bad = sorted(n for n in names if n not in PREFIX_FREE and n not in known.get(src, ())
                     and not any(n == p or n.startswith(p + "_") for p in ok))
        if bad:
            errs.append(f"{src} defines {', '.join(bad)}: name them {' or '.join(sorted(ok))}_* "
                        "(or move them to a file named for them)")
    return errs


def test_one_prefix_per_file():
    graph()     # every object built and fresh
    defs = function_defs(objects(harness.BUILD))
    errs = prefix_errors(defs, set(sources()))
    assert not errs, "\n".join(errs)
    gone = sorted((src, n) for src, names in KNOWN_PREFIXES.items() for n in names
                  if n not in defs.get(src, ()))
    assert not gone, f"fixed: remove from test_layers.py's KNOWN_PREFIXES: {gone}"


def test_the_prefix_check_can_fail():
    """A planted violation of each kind is reported; each allowed form is not."""
    paths = {"user/engine/files.c", "user/engine/files_keys.c", "user/ui/ui_canvas.c",
             "user/engine/table.c", "user/exact/inject_call.c", "user/main.c"}
    defs = {"user/engine/table.c": {"table_add", "engine_find", "new_proc", "proc_for"},
            "user/engine/files_keys.c": {"files_row", "files_keys_add", "fkeys_add"},
            "user/ui/ui_canvas.c": {"canvas_put", "ui_canvas_x", "draw_box"},
            "user/exact/inject_call.c": {"inj_run_call", "injx_run"},
            "user/main.c": {"main", "main_opts", "parse"}}
    assert prefix_errors(defs, paths, known={}) == [
        "user/engine/files_keys.c defines fkeys_add: name them engine or files or files_keys_* "
        "(or move them to a file named for them)",
        "user/engine/table.c defines new_proc, proc_for: name them engine or table_* "
        "(or move them to a file named for them)",
        "user/exact/inject_call.c defines injx_run: name them exact or inj or inject_call_* "
        "(or move them to a file named for them)",
        "user/main.c defines parse: name them main_* (or move them to a file named for them)",
        "user/ui/ui_canvas.c defines draw_box: name them canvas or ui or ui_canvas_* "
        "(or move them to a file named for them)"]
    # Without files.c or files.h beside it, files_keys.c is no part of a module files.
    assert "files_row" in prefix_errors(defs, paths - {"user/engine/files.c"}, known={})[0]
    assert prefix_errors(defs, paths, known={
        "user/engine/files_keys.c": {"fkeys_add"}, "user/engine/table.c": {"new_proc", "proc_for"},
        "user/exact/inject_call.c": {"injx_run"}, "user/main.c": {"parse"},
        "user/ui/ui_canvas.c": {"draw_box"}}) == []
