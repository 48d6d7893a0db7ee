"""--help, the README and the man page say the same thing (the way bpftool's selftests keep its
help, docs and completion in step): every option and subcommand --help lists is documented in
README.md and doc/mevitop.8, nothing is documented that --help does not list, and the lists of
forceable fallbacks agree."""
import os
import re
import subprocess

import harness

README = os.path.join(harness.ROOT, "README.md")
MANPAGE = os.path.join(harness.ROOT, "doc", "mevitop.8")
LONG_OPT = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")


def help_text():
    r = subprocess.run([harness.MEVITOP, "--help"], capture_output=True, text=True,
                       env=harness.SAN_ENV, timeout=harness.GUARD_S)
    assert r.returncode == 0, r.stderr
    return r.stdout


def readme_options():
    """The README's option tables and testing switches: from '### Options' to the next '## '."""
    text = open(README).read()
    start = text.index("### Options")
    end = text.index("\n## ", start)
    return text[start:end]


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
    assert not missing_readme, f"in --help but not in README's options: {sorted(missing_readme)}"
    assert not missing_man, f"in --help but not in the man page: {sorted(missing_man)}"


def test_nothing_documented_that_help_does_not_list():
    helped = options(help_text())
    extra_readme = options(readme_options()) - helped
    extra_man = options(man_text()) - helped
    assert not extra_readme, f"in README's options but not in --help: {sorted(extra_readme)}"
    assert not extra_man, f"in the man page but not in --help: {sorted(extra_man)}"


def test_subcommands_documented():
    subs = subcommands(help_text())
    assert "run" in subs, subs
    readme = open(README).read()
    man = man_text()
    for s in subs:
        assert f"mevitop {s}" in readme, f"subcommand {s} missing from README"
        assert re.search(rf"mevitop {s}\b", man), f"subcommand {s} missing from the man page"


def test_disable_lists_agree():
    helped = disable_names(help_text())
    assert {"tp_btf", "pagemap_scan", "uffd"} <= helped, helped
    readme = open(README).read()
    m = re.search(r"`--disable\s+FEATURE\[,\.\.\.\]` or `MEVITOP_DISABLE=\.\.\.` forces a "
                  r"fallback:(.*?)\.\n", readme, re.S)
    assert m, "README's --disable sentence not found"
    in_readme = set(re.findall(r"`([a-z_0-9]+)`", m.group(1)))
    assert in_readme == helped, f"README {sorted(in_readme)} != --help {sorted(helped)}"
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
    """The README's key table: {where: its keys cell}."""
    text = open(README).read()
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
                missing.append(f"README {view}: {tok}")
            if not documented(tok, m, lambda t: f"\\fB{t}\\fR"):
                missing.append(f"man {view}: {tok}")
    assert not missing, missing
