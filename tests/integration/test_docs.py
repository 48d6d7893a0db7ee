"""--help, the docs and the man page say the same thing (the way bpftool's selftests keep its
help, docs and completion in step): every option and subcommand --help lists is documented in
doc/options.md and doc/mevitop.8, nothing is documented that --help does not list, the lists of
forceable fallbacks agree, and the view's keys are those of doc/view.md.  The README stays a
two-minute read: what it is, the two commands, a tour, and a list of every doc/*.md; every
relative link of the README and the docs leads to a file and a heading that exist."""
import os
import re
import subprocess

import harness

README = os.path.join(harness.ROOT, "README.md")
DOC = os.path.join(harness.ROOT, "doc")
OPTIONS = os.path.join(DOC, "options.md")     # the commands and every option
VIEW = os.path.join(DOC, "view.md")           # the interactive view and its keys
MANPAGE = os.path.join(harness.ROOT, "doc", "mevitop.8")
LONG_OPT = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")


def help_text():
    r = subprocess.run([harness.MEVITOP, "--help"], capture_output=True, text=True,
                       env=harness.SAN_ENV, timeout=harness.GUARD_S)
    assert r.returncode == 0, r.stderr
    return r.stdout


def readme_options():
    """doc/options.md's option table and testing switches: from '## Options' to the next
    '## ' (or the end)."""
    text = open(OPTIONS).read()
    start = text.index("## Options")
    end = text.find("\n## ", start)
    return text[start:end if end >= 0 else len(text)]


def man_text():
    # roff escapes a hyphen as \- ; fonts as \fB...\fR
    return re.sub(r"\\f[BIRP]", "", open(MANPAGE).read()).replace("\\-", "-")


def options(text):
    return set(LONG_OPT.findall(text))


def subcommands(text):
    """Usage lines of --help (its first paragraph): 'mevitop WORD ...', WORD not an option."""
    usage = text.split("\n\n")[0]
    return set(re.findall(r"^(?:Usage:)?\s*mevitop ([a-z]+)\b", usage, re.M))


def disable_names(text):
    m = re.search(r"--disable FEATURE\[,\.\.\.\][^(]*\(([^)]*)\)", text, re.S)
    assert m, "no --disable list found"
    body = m.group(1).split(";")[0]
    return set(re.findall(r"[a-z_0-9]+", body)) - {"also", "mevitop_disable"}


def test_every_help_option_is_documented():
    helped = options(help_text())
    assert len(helped) > 20, helped
    missing_readme = helped - options(readme_options())
    missing_man = helped - options(man_text())
    assert not missing_readme, f"in --help but not in doc/options.md: {sorted(missing_readme)}"
    assert not missing_man, f"in --help but not in the man page: {sorted(missing_man)}"


def test_nothing_documented_that_help_does_not_list():
    helped = options(help_text())
    extra_readme = options(readme_options()) - helped
    extra_man = options(man_text()) - helped
    assert not extra_readme, f"in doc/options.md but not in --help: {sorted(extra_readme)}"
    assert not extra_man, f"in the man page but not in --help: {sorted(extra_man)}"


def test_subcommands_documented():
    subs = subcommands(help_text())
    assert "run" in subs, subs
    readme = open(OPTIONS).read()
    man = man_text()
    for s in subs:
        assert f"mevitop {s}" in readme, f"subcommand {s} missing from doc/options.md"
        assert re.search(rf"mevitop {s}\b", man), f"subcommand {s} missing from the man page"


def test_disable_lists_agree():
    helped = disable_names(help_text())
    assert {"tp_btf", "pagemap_scan", "uffd"} <= helped, helped
    readme = open(OPTIONS).read()
    m = re.search(r"`--disable\s+FEATURE\[,\.\.\.\]` or `MEVITOP_DISABLE=\.\.\.` forces a "
                  r"fallback:(.*?)\.\n", readme, re.S)
    assert m, "doc/options.md's --disable sentence not found"
    in_readme = set(re.findall(r"`([a-z_0-9]+)`", m.group(1)))
    assert in_readme == helped, f"doc/options.md {sorted(in_readme)} != --help {sorted(helped)}"
    man = man_text()
    m = re.search(r"Force a fallback \(for tests\):(.*?)\. Also", man, re.S)
    assert m, "man page's --disable entry not found"
    in_man = set(re.findall(r"[a-z_0-9]+", m.group(1)))
    assert in_man == helped, f"man page {sorted(in_man)} != --help {sorted(helped)}"


# --- the interactive view's keys: one table (mevitop --keys), and everything shows it ---

def key_table():
    """(view, keys, what) per binding, from the tables the view dispatches with."""
    r = subprocess.run([harness.MEVITOP, "--keys"], capture_output=True, text=True,
                       env=harness.SAN_ENV, timeout=harness.GUARD_S)
    assert r.returncode == 0, r.stderr
    rows = [tuple(line.split("\t")) for line in r.stdout.splitlines()]
    assert all(len(row) == 3 and all(row) for row in rows), rows
    assert {v for v, _, _ in rows} == {"Anywhere", "Process list", "Heatmap", "Files",
                                       "File heatmap", "Replay"}, rows
    return rows


def readme_keys():
    """doc/view.md's key table: {where: its keys cell}."""
    text = open(VIEW).read()
    start = text.index("| where | keys |")
    out = {}
    for line in text[start:].split("\n")[2:]:
        if not line.startswith("|"):
            break
        where, keys = line.strip("|").split("|", 1)
        out[where.strip()] = keys
    return out


def man_keys():
    """The man page's KEYS section: {paragraph title: its text, fonts kept}."""
    raw = open(MANPAGE).read()
    sec = raw[raw.index(".SH KEYS"):]
    sec = sec[:sec.index("\n.SH", 1)]
    out = {}
    for para in sec.split(".TP\n")[1:]:
        title, body = para.split("\n", 1)
        out[title.strip()] = body
    return out


def documented(token, text, quote):
    """A one-character key must appear quoted (`x` in README, \\fBx\\fR in the man page, so a
    stray comma does not count); a named key (PgUp, F10, Shift-Tab) as a word."""
    if len(token) == 1:
        return quote(token) in text
    return re.search(rf"(?<![\w-]){re.escape(token)}(?![\w-])", text, re.I) is not None


def test_every_key_is_in_the_readme_and_man_page():
    readme, man = readme_keys(), man_keys()
    missing = []
    for view, keys, _ in key_table():
        r = readme.get(view.lower(), "")
        m = man.get(view, "").replace("\\-", "-")
        for tok in keys.split():
            if not documented(tok, r, lambda t: f"`{t}`"):
                missing.append(f"doc/view.md {view}: {tok}")
            if not documented(tok, m, lambda t: f"\\fB{t}\\fR"):
                missing.append(f"man {view}: {tok}")
    assert not missing, missing


# --- the README is short, and every link of it and of the docs leads somewhere ---

LINK = re.compile(r"\[[^\]]+\]\(([^)\s]+)\)")
TWO_COMMANDS = ("    sudo ./make.sh run ", "    sudo ./make.sh test ")


def slug(heading):
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path):
    text = re.sub(r"```.*?```", "", open(path).read(), flags=re.S)     # not in code
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def link_errors(path):
    """Relative links of one Markdown file whose file or #heading does not exist."""
    errs = []
    text = re.sub(r"```.*?```", "", open(path).read(), flags=re.S)
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue                        # https:, mailto:
        file, _, frag = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        rel = os.path.relpath(path, harness.ROOT)
        if not os.path.exists(dest):
            errs.append(f"{rel}: {target}: no such file")
        elif frag and dest.endswith(".md") and frag not in anchors(dest):
            errs.append(f"{rel}: {target}: no such heading")
    return errs


def test_readme_is_a_two_minute_read():
    text = open(README).read()
    lines = text.splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines: the reference goes in doc/*.md"
    for cmd in TWO_COMMANDS:
        assert any(line.startswith(cmd) for line in lines), f"README lost {cmd.strip()!r}"
    assert "## Documentation" in text, "README has no Documentation list"


def test_readme_lists_every_doc():
    text = open(README).read()
    docs = text[text.index("## Documentation"):]
    linked = {os.path.normpath(t) for t in LINK.findall(docs)}
    mds = {os.path.join("doc", f) for f in os.listdir(DOC) if f.endswith(".md")}
    assert not mds - linked, f"doc pages missing from README's Documentation list: " \
                             f"{sorted(mds - linked)}"


def test_every_link_leads_somewhere():
    paths = [README] + sorted(os.path.join(DOC, f) for f in os.listdir(DOC) if f.endswith(".md"))
    errs = [e for p in paths for e in link_errors(p)]
    assert not errs, "\n".join(errs)


def test_the_link_check_can_fail(tmp_path):
    """A planted broken link and heading are reported (so a passing run means something)."""
    (tmp_path / "a.md").write_text("# Top\n\n## Who made it (`--x`)\n\n"
                                   "[ok](#who-made-it---x) [ok](b.md#top) [web](https://x)\n"
                                   "[bad](#nowhere) [bad](c.md) [bad](b.md#gone)\n"
                                   "```\n[in code](d.md)\n```\n")
    (tmp_path / "b.md").write_text("# Top\n")
    errs = [e.split(": ", 1)[1] for e in link_errors(str(tmp_path / "a.md"))]
    assert errs == ["#nowhere: no such heading", "c.md: no such file",
                    "b.md#gone: no such heading"], errs
