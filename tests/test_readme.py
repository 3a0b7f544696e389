"""Every hand-written Markdown file: prose that guides and cannot go stale
quietly. The files are every *.md in the repository but the generated
report (report/linux.md), the test fixtures and what builds and runs write
(build/, bin/, results/, hidden directories): README.md, docs/, models/,
ebpf/ and any added later.

- No measured figure in hand-written prose. Every figure-like token in the
  prose (a split such as 17/15 or 44/17/2/1, a count of rounds such as
  "3 of 9", a percentage, a number with a unit of time, rate or size (ms,
  µs, us, s, req/s, k), a ratio such as 0.92x or 3:1) must appear in the committed report/linux.md, which is generated
  from the CANONICAL run, or be a design constant on ALLOWED below. Code
  spans, code blocks and link targets are not prose: CLI values and sample
  output live there.
- Every relative link resolves: the file exists, and an anchor into a
  markdown file names one of its headings.
- A constant the prose states is the code's (CONSTANTS below): a number
  copied from the code goes stale as surely as a measured one, so where
  the prose states one, the test reads the code's value.
- Each check is also run on planted bad text, so it is known to fail.
- The README's variants table lists exactly the variants
  `bin/acceptlab-server --list-variants` prints (one JSON line each).
- The tables the server's own text fills (the variants tables of README.md
  and docs/server.md, docs/server.md's environment tables) are what
  `ci/server_tables.py` renders from the server now, and every environment
  variable the server's C code names is one `--list-environment` lists.
"""

import glob
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata

import pytest

from tests.conftest import ROOT, SERVER

README = os.path.join(ROOT, "README.md")
REPORT = os.path.join(ROOT, "report", "linux.md")
# Markdown that is not hand-written prose: the generated report, the
# fixtures (golden outputs), and directories builds and runs write.
NOT_HAND_WRITTEN = {"report/linux.md", "tests/fixtures"}
OUTPUT_DIRS = {"build", "bin", "results"}

# Design constants: figures the prose may state because the code fixes
# them, not because a run measured them. Keep this short; a measured
# figure belongs in the report and the prose points at its section.
ALLOWED = {
    "2:1": "the design notes' balance criterion, max/min over the workers (the report's within 2:1; "
           "ci/gate.py prints it beside the target)",
    "17/15": "the balancers' target at 2 workers, 16 connections each (servers/load.h, tests/test_balance.py)",
    "1/8": "nginx's ngx_accept_disabled rule, which the mutex variant copies",
    "500ms": "nginx's accept_mutex_delay default, also --accept-mutex-delay's",
    "100ms": "the rest after EMFILE (worker.c ACCEPT_REST_MS) and the strict mutex's steal (STRICT_STEAL_MS)",
    "1s": "a retiring worker's idle close, the supervisor's fast-death window, the SYN window's bound",
    "2ms": "fdpass's busy rule: asleep inside a handler this long",
    "20ms": "fdpass's busy rule: inside a handler this long whatever its state",
    "1%": "make bench's goal for the A/A floor (BENCH_FLOOR_GOAL, report/sections/cost.py) and the "
           "diagnosis's beyond-chance bound (DIAG_BEYOND_CHANCE, ebpf/diagnosis.h)",
}

# Constants the prose states, each checked against the code that fixes it:
# (file, pattern whose groups are the stated numbers, module, name). The
# pattern's spaces match any white space (a sentence may wrap); a number may
# be spelled as a word. A pattern that no longer matches fails too: the
# sentence changed, so this table must follow it.
CONSTANTS = [
    ("README.md", r"burst: (\w+) bursts per arm", "probes.studies.burst", "BURST_ROUNDS"),
    ("README.md", r"at 2 workers only, (\w+) rounds of short runs", "probes.studies.cost", "COST_ROUNDS"),
    ("README.md", r"the passive watch.s hooks alone\) in (\w+) rounds", "probes.studies.trace_overhead",
     "TRACE_ROUNDS"),
    ("README.md", r"taking the three shapes back to back, (\w+) rounds, no tracer", "probes.studies.balancing",
     "WIDE_ROUNDS"),
    ("docs/campaign.md", r"on it, (\w+) bursts per K \((\w+) with `--quick`", "probes.studies.burst",
     ("BURST_ROUNDS", "BURST_QUICK_ROUNDS")),
    ("docs/campaign.md", r"K = (\d+) x N and (\d+) x N", "probes.studies.burst", "BURST_PER_WORKER"),
    ("docs/campaign.md", r"asking `GET /work\?us=(\d+)` once", "probes.studies.burst", "BURST_US"),
    ("docs/campaign.md", r"(\w+) connections per worker: burst 32", "probes.studies.balancing", "PER_WORKER"),
]
WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}

UNIT = r"(?:req/s|ms|µs|us|s|k)"
NUMBER = r"\d+(?:[.,]\d+)*"
# Each pattern: a figure-like token. The look-behinds keep a token from
# starting inside a word, a path, an address or a larger number.
FIGURE = re.compile(
    r"(?<![\w./:-])(?:"
    r"(?P<split>\d+(?:/\d+)+)(?![\w/])"                 # 17/15, 44/17/2/1
    r"|(?P<of>\d+ of \d+)(?![\w.])"                     # 3 of 9 (rounds)
    r"|(?P<pct>" + NUMBER + r" ?%)"                     # 95%, 4 %
    r"|(?P<unit>" + NUMBER + r" ?" + UNIT + r")(?![\w/])"  # 500 ms, 2 s, 6670 req/s, 64 k
    r"|(?P<times>\d+(?:\.\d+)?x)(?!\w)"                 # 0.92x, 1.9x
    r"|(?P<colon>\d+:\d+)(?![\w.]|:\d)"                 # 2:1 (not 12:30:05)
    r")")


def normalize(token):
    """One spelling per figure: no spaces, no thousands commas, us for µs,
    "N of M" as N/M."""
    t = token.replace("µs", "us").replace(" ", "")
    m = re.fullmatch(r"(\d+)of(\d+)", t)
    if m:
        return "%s/%s" % m.groups()
    if re.fullmatch(r"\d{1,3}(,\d{3})+\D*", t):
        t = t.replace(",", "")
    return t


def blank(text, start, end):
    """text with [start, end) replaced by spaces, newlines kept (so line
    numbers and other offsets stay)."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


FENCED = re.compile(r"(?ms)^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$")


def without_fences(text):
    """text with its fenced code blocks and HTML comments blanked out."""
    for pattern in (FENCED, re.compile(r"(?s)<!--.*?-->")):
        for m in reversed(list(pattern.finditer(text))):
            text = blank(text, m.start(), m.end())
    return text


def prose(text):
    """The markdown with everything that is not prose blanked out: fenced
    code blocks, HTML comments, code spans, link targets."""
    text = without_fences(text)
    for m in reversed(list(re.finditer(r"(`+)(?!`).+?(?<!`)\1(?!`)", text, re.S))):
        text = blank(text, m.start(), m.end())
    for m in reversed(list(re.finditer(r"\]\([^)]*\)", text))):
        text = blank(text, m.start() + 1, m.end())
    return text


def figures(text):
    """[(line, token)] for every figure-like token in text."""
    out = []
    for m in FIGURE.finditer(text):
        out.append((text.count("\n", 0, m.start()) + 1, m.group(0)))
    return out


def doc_files(root=ROOT):
    """Every hand-written Markdown file under root, sorted: not in a hidden
    directory or an output directory at the top, not on NOT_HAND_WRITTEN."""
    def kept(top, name):
        return os.path.relpath(os.path.join(top, name), root).replace(os.sep, "/") not in NOT_HAND_WRITTEN
    out = []
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and kept(top, d)
                   and not (top == root and d in OUTPUT_DIRS)]
        out += [os.path.join(top, f) for f in files if f.endswith(".md") and kept(top, f)]
    return sorted(out)


def rel(path):
    return os.path.relpath(path, ROOT)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# ---- the extractor itself --------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("bare split 31/1 and 44/17/2/1 here", ["31/1", "44/17/2/1"]),
    ("3 of 9 rounds outside 2:1, within 2:1: here; at 12:30:05", ["3 of 9", "2:1", "2:1"]),
    ("took 6 ms, 320 µs, 12 us, 2.5 s and 70000 req/s", ["6 ms", "320 µs", "12 us", "2.5 s", "70000 req/s"]),
    ("at 64 k and 5% and 95 %", ["64 k", "5%", "95 %"]),
    ("a ratio of 0.92x, or 1.9x", ["0.92x", "1.9x"]),
    ("paths tests/c/ and 127.0.0.1:8080 and v1.21.6 and 10 x 8", []),
    ("2 shapes, 3 sockets, 16 connections per worker, 8 KiB", []),
])
def test_extractor_finds_figures_and_nothing_else(text, expected):
    assert [t for _, t in figures(text)] == expected


def test_prose_leaves_out_code_and_link_targets():
    text = ("a 6 ms claim\n```\nburst 32: 31/1 took 9 ms\n```\n"
            "the `--gap-ms 10` option, ``a `9 ms` span``, [a link](x/31/1.md)\n")
    assert [t for _, t in figures(prose(text))] == ["6 ms"]
    assert figures(prose(text))[0][0] == 1


def test_normalize_spellings():
    assert normalize("500 ms") == normalize("500ms") == "500ms"
    assert normalize("320 µs") == "320us"
    assert normalize("1,500 req/s") == "1500req/s"
    assert normalize("3 of 9") == "3/9"
    assert normalize("95 %") == "95%"


# ---- the documents -----------------------------------------------------------

def stray_figures(paths, report_text):
    """["file:line: 'token'"] for every figure in the prose of paths that
    report_text does not hold and ALLOWED does not list."""
    in_report = {normalize(t) for _, t in figures(report_text)}
    stray = []
    for path in paths:
        for line, token in figures(prose(read(path))):
            norm = normalize(token)
            if norm not in in_report and norm not in ALLOWED:
                stray.append("%s:%d: %r" % (rel(path), line, token))
    return stray


def test_the_documents_are_every_hand_written_markdown_file():
    """The checks below cover every Markdown file people write, wherever it
    lives, and leave out the generated report and the golden fixtures."""
    files = {rel(p) for p in doc_files()}
    for must in ("README.md", "docs/campaign.md", "docs/server.md", "docs/tests.md", "models/README.md",
                 "ebpf/README.md"):
        assert must in files, (must, sorted(files))
    assert not [f for f in files if f == "report/linux.md" or f.startswith(("tests/fixtures/", "build/"))], files


def test_no_figure_that_the_report_does_not_hold():
    """Every figure in the prose is in report/linux.md or is a design
    constant: a figure copied by hand from a run goes stale, the report is
    regenerated from the run it names."""
    stray = stray_figures(doc_files(), read(REPORT))
    assert not stray, ("figures in hand-written prose that report/linux.md does not hold (point at the "
                       "report's section instead, or add a design constant to ALLOWED with its reason):\n  "
                       + "\n  ".join(stray))


def slug(heading, seen):
    """GitHub's anchor for a heading: lower case, punctuation but - and _
    dropped, spaces as -, a -N suffix for repeats."""
    text = re.sub(r"[`*_]{1,2}(?=\S)|(?<=\S)[`*_]{1,2}", "", heading.strip()).lower()
    text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    base = text.replace(" ", "-")
    n = seen.get(base, 0)
    seen[base] = n + 1
    return base if n == 0 else "%s-%d" % (base, n)


def anchors(path):
    seen = {}
    body = without_fences(read(path))  # a "#" line inside a code block is not a heading
    return {slug(m.group(1), seen) for m in re.finditer(r"(?m)^#{1,6}\s+(.*?)\s*#*\s*$", body)}


def links(text):
    """[(line, target)] of inline links and reference definitions."""
    out = []
    for m in re.finditer(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", text):
        out.append((text.count("\n", 0, m.start()) + 1, m.group(1)))
    for m in re.finditer(r"(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", text):
        out.append((text.count("\n", 0, m.start()) + 1, m.group(1)))
    return out


def broken_links(paths):
    """["file:line: target (why)"] for every relative link in paths that
    does not resolve."""
    bad = []
    for path in paths:
        for line, target in links(without_fences(read(path))):  # a link in a code block is none
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # http:, https:, mailto:
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            where = "%s:%d: %s" % (rel(path), line, target)
            if not os.path.exists(dest):
                bad.append(where + " (no such file)")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                bad.append(where + " (no such heading in %s)" % rel(dest))
    return bad


def as_number(text):
    return WORDS[text.lower()] if text.lower() in WORDS else int(text)


def constant_mismatches(table, text_of):
    """["file: what"] for each CONSTANTS row whose sentence is gone from
    text_of(file) or states a number other than the code's."""
    bad = []
    for path, pattern, module, names in table:
        m = re.search(pattern.replace(" ", r"\s+"), text_of(path))
        if not m:
            bad.append("%s: no sentence matches %r (it changed: update CONSTANTS)" % (path, pattern))
            continue
        mod = importlib.import_module(module)
        code = [getattr(mod, n) for n in ((names,) if isinstance(names, str) else names)]
        if len(code) == 1 and isinstance(code[0], (list, tuple)):
            code = list(code[0])
        try:
            stated = [as_number(g) for g in m.groups()]
        except ValueError:
            stated = list(m.groups())
        if stated != code:
            bad.append("%s: %r states %s, the code (%s %s) has %s" % (path, m.group(0), stated, module, names, code))
    return bad


def test_constants_in_prose_are_the_codes():
    """A number the prose states because the code fixes it (bursts per
    K, rounds, connections per worker, the burst's CPU per request) is the
    code's number."""
    bad = constant_mismatches(CONSTANTS, lambda f: read(os.path.join(ROOT, f)))
    assert not bad, "prose that states a constant the code does not have:\n  " + "\n  ".join(bad)


def test_relative_links_resolve():
    bad = broken_links(doc_files())
    assert not bad, "broken relative links:\n  " + "\n  ".join(bad)


def readme_variants():
    """The first cells of the README's variants table (header: variant |
    mechanism), without their backquotes; fails unless there is exactly
    one such table."""
    tables, current = [], None
    for line in read(README).splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]] if line.strip().startswith("|") else None
        if cells is None:
            current = None
            continue
        if current is None:
            current = {"header": [c.lower() for c in cells], "rows": []}
            tables.append(current)
        elif not all(re.fullmatch(r":?-+:?", c) for c in cells):
            current["rows"].append(cells)
    found = [t for t in tables if t["header"][:2] == ["variant", "mechanism"]]
    assert len(found) == 1, "README.md: expected one variants table (variant | mechanism), found %d" % len(found)
    return [row[0].strip("`") for row in found[0]["rows"]]


def test_readme_variants_table_matches_the_server():
    assert os.access(SERVER, os.X_OK), "%s is missing: run make first" % SERVER
    out = subprocess.run([SERVER, "--list-variants"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 0, out.stderr
    served = [json.loads(line)["variant"] for line in out.stdout.splitlines() if line.strip()]
    listed = readme_variants()
    assert len(listed) == len(set(listed)), "README.md lists a variant twice: %s" % listed
    assert sorted(listed) == sorted(served), (
        "README.md's variants table and --list-variants differ: only in the README %s; only in the server %s"
        % (sorted(set(listed) - set(served)), sorted(set(served) - set(listed))))


def server_tables_check(root=ROOT):
    return subprocess.run([sys.executable, "-m", "ci.server_tables", "--check", "--server", SERVER,
                           "--root", str(root)], cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_server_tables_are_the_servers():
    """Each variant's mechanism and each environment variable's effect is
    written once, in C: the tables README.md and docs/server.md show are
    rendered from --list-variants and --list-environment, and are what
    they render today."""
    assert os.access(SERVER, os.X_OK), "%s is missing: run make first" % SERVER
    res = server_tables_check()
    assert res.returncode == 0, "tables that differ from the server's text:\n" + res.stderr


def test_server_tables_check_fails_on_planted_tables(tmp_path):
    """The check itself: a README row edited by hand, and a docs/server.md
    table whose markers are gone, each fail it, naming the file and table."""
    os.makedirs(tmp_path / "docs")
    shutil.copy(README, tmp_path / "README.md")
    shutil.copy(os.path.join(ROOT, "docs", "server.md"), tmp_path / "docs" / "server.md")
    assert server_tables_check(tmp_path).returncode == 0
    readme = read(str(tmp_path / "README.md"))
    edited = re.sub(r"(?m)^(\| `bare` \|)[^\n]*$", r"\1 the race, written by hand |", readme, count=1)
    assert edited != readme
    (tmp_path / "README.md").write_text(edited)
    server_md = read(str(tmp_path / "docs" / "server.md"))
    (tmp_path / "docs" / "server.md").write_text(server_md.replace("<!-- END environment knobs -->", ""))
    res = server_tables_check(tmp_path)
    assert res.returncode == 1, res.stderr
    assert "README.md: the variants table differs" in res.stderr, res.stderr
    assert "docs/server.md: no markers for the environment knobs table" in res.stderr, res.stderr


def test_every_environment_variable_the_server_names_is_listed():
    """A variable the server's C code reads (any "ACCEPTLAB_..." string in
    servers/) is one --list-environment lists, so --help and docs/server.md
    cannot miss it; and every test switch is named ACCEPTLAB_TEST_*, every
    knob not."""
    out = subprocess.run([SERVER, "--list-environment"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 0, out.stderr
    listed = {json.loads(line)["name"]: json.loads(line)["kind"] for line in out.stdout.splitlines() if line.strip()}
    named = set()
    for path in glob.glob(os.path.join(ROOT, "servers", "**", "*.[ch]"), recursive=True):
        named |= set(re.findall(r'"(ACCEPTLAB_[A-Z0-9_]+)', read(path)))
    assert named, "no ACCEPTLAB_ variable found in servers/"
    missing = sorted(named - set(listed))
    assert not missing, "read by the server, not in --list-environment (servers/main.c): %s" % ", ".join(missing)
    misnamed = sorted(n for n, kind in listed.items() if (kind == "test") != n.startswith("ACCEPTLAB_TEST_"))
    assert not misnamed, "a test switch must be named ACCEPTLAB_TEST_* and only a test switch: %s" % misnamed


def test_tables_end_before_the_next_paragraph():
    """A line right after a table row that is not blank is read as one more
    row of the table: the paragraph it was meant to start is lost in it."""
    bad = []
    for path in doc_files():
        lines = without_fences(read(path)).splitlines()
        for i, (row, nxt) in enumerate(zip(lines, lines[1:]), 2):
            if row.lstrip().startswith("|") and nxt.strip() and not nxt.lstrip().startswith("|"):
                bad.append("%s:%d: %s" % (rel(path), i, nxt.strip()[:60]))
    assert not bad, "text glued to the table above it (leave a blank line):\n  " + "\n  ".join(bad)


# ---- the checks can fail: planted stale text ------------------------------------

def test_planted_stale_figures_are_found(tmp_path):
    """A figure copied by hand from an old run (a burst gap, a count of
    rounds, a split, a percentage) in any Markdown file is found, line by
    line, when the report does not hold it; the same figure in a code span
    or a design constant is not."""
    doc = tmp_path / "models" / "README.md"
    doc.parent.mkdir()
    doc.write_text("Bursts start 50 ms apart.\n\n"
                   "The rule held in 12 of 12 rounds, 61/3/0/0 at most, 4 % apart.\n"
                   "Within 2:1 and `burst 50 ms` in code.\n")
    report = "| x | 25 ms | 3 of 9 |\n"
    stray = stray_figures([str(doc)], report)
    assert [s.split(": ", 1)[1] for s in stray] == ["'50 ms'", "'12 of 12'", "'61/3/0/0'", "'4 %'"], stray
    assert [int(s.split(":")[1]) for s in stray] == [1, 3, 3, 3], stray
    assert stray_figures([str(doc)], report + "50 ms, 12/12, 61/3/0/0, 4%\n") == []


def test_planted_broken_links_are_found(tmp_path):
    """A link to a missing file, and an anchor naming no heading of its
    file, are found; a good link and one inside a code block are not."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A title\n\n## Second part\n")
    doc = tmp_path / "docs" / "b.md"
    doc.write_text("[ok](a.md#second-part) [gone](missing.md) [bad anchor](a.md#no-such)\n"
                   "```\n[in code](missing.md)\n```\n")
    bad = broken_links([str(doc)])
    assert len(bad) == 2 and "missing.md (no such file)" in bad[0] and "a.md#no-such (no such heading" in bad[1], bad


def test_planted_stale_constant_is_found():
    """A sentence stating a constant other than the code's is named; so is
    a sentence that no longer matches its pattern."""
    table = [("x.md", r"on it, (\w+) bursts per K", "probes.studies.burst", "BURST_ROUNDS")]
    from probes.studies import burst
    wrong = burst.BURST_ROUNDS + 2
    bad = constant_mismatches(table, lambda f: "on it, %d bursts\nper K" % wrong)
    assert len(bad) == 1 and "states [%d]" % wrong in bad[0], bad
    assert constant_mismatches(table, lambda f: "on it, %d bursts per K" % burst.BURST_ROUNDS) == []
    assert "no sentence matches" in constant_mismatches(table, lambda f: "reworded")[0]


def test_doc_files_take_every_markdown_file_but_generated_ones(tmp_path):
    """A new Markdown file anywhere is checked; the generated report, the
    fixtures, build output, run results and hidden directories are not."""
    for f in ("README.md", "docs/a.md", "models/README.md", "new/deeper/notes.md", "report/linux.md",
              "report/notes.md", "tests/fixtures/report/expected_linux.md", "build/bench/linux.md",
              "results/linux/x/raw.md", ".pytest_cache/README.md", "docs/not-markdown.txt"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("x\n")
    got = [os.path.relpath(p, tmp_path) for p in doc_files(str(tmp_path))]
    assert got == ["README.md", "docs/a.md", "models/README.md", "new/deeper/notes.md", "report/notes.md"], got
