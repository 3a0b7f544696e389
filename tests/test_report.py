"""Tests for report/report.py, the generator of report/linux.md.

The generator is run as a user runs it, a separate process under Debian's
/usr/bin/python3, against a fixture run (tests/fixtures/report/results/linux/):
4 variants x 3 shapes x 3 rounds with a failed step, a round with errors, starved
rounds, keepalive rows and unknown keys. The golden file expected_linux.md was
checked cell by cell against that fixture; if the report format changes on
purpose, regenerate it with

    /usr/bin/python3 report/report.py --results-dir tests/fixtures/report/results/linux \
        --out tests/fixtures/report/expected_linux.md

and read the diff before committing it.
"""

import difflib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "report" / "report.py"
FIXTURE = REPO / "tests" / "fixtures" / "report"
FIXTURE_RESULTS = FIXTURE / "results" / "linux"
EXPECTED = FIXTURE / "expected_linux.md"
STAMP = "20261129T081500Z"
# The project's interpreter is Debian's; another python3 on PATH may lack things.
PYTHON = sys.executable if sys.executable == "/usr/bin/python3" else "/usr/bin/python3"


def run_report(*args, cwd=REPO):
    return subprocess.run([PYTHON, str(SCRIPT), *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def results(tmp_path):
    """A writable copy of the fixture run; the report is run from tmp_path with the
    relative --results-dir results/linux, so messages name paths exactly."""
    dest = tmp_path / "results" / "linux"
    shutil.copytree(FIXTURE_RESULTS, dest)
    return dest


def run_in(tmp_path, *extra):
    return run_report("--results-dir", "results/linux", "--out", "linux.md", *extra, cwd=tmp_path)


def assert_input_error(proc, tmp_path, expected_line):
    """Exit 1, exactly the one expected stderr line, no traceback, nothing written."""
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [expected_line]
    assert proc.stdout == ""
    assert not (tmp_path / "linux.md").exists()


def edit_jsonl_line(path, lineno, edit):
    lines = path.read_text().splitlines(keepends=True)
    lines[lineno - 1] = edit(lines[lineno - 1])
    path.write_text("".join(lines))


# ---------------------------------------------------------------- output


def test_golden_output_matches_expected(tmp_path):
    """The fixture run renders byte-for-byte as the reviewed expected_linux.md.

    This pins every cell, the ordering rules (file rows are shuffled: lt-yield
    first, rounds out of order), the `!` footnotes, the computed summary and the
    quoted reference rows; a unified diff shows what changed on mismatch."""
    out = tmp_path / "linux.md"
    proc = run_report("--results-dir", FIXTURE_RESULTS, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout == f"report: wrote {out} from run {STAMP} (106 rounds)\n"
    got, want = out.read_bytes(), EXPECTED.read_bytes()
    if got != want:
        diff = difflib.unified_diff(want.decode().splitlines(keepends=True),
                                    got.decode().splitlines(keepends=True),
                                    fromfile=str(EXPECTED), tofile=str(out))
        pytest.fail("report differs from the golden file:\n" + "".join(diff), pytrace=False)


def test_regeneration_is_byte_identical(tmp_path):
    """Two runs give identical bytes, whatever the output path: the report is a pure
    function of the run's files (no timestamp, no paths, stable ordering)."""
    first, second = tmp_path / "a.md", tmp_path / "sub" / "b.md"
    second.parent.mkdir()
    for out in (first, second, first):
        assert run_report("--results-dir", FIXTURE_RESULTS, "--out", out).returncode == 0
    assert first.read_bytes() == second.read_bytes()


def test_run_option_overrides_canonical(results, tmp_path):
    """--run STAMP reports that run even when CANONICAL names one that does not exist:
    CANONICAL is only the default."""
    (results / "CANONICAL").write_text("20990101T000000Z\n")
    proc = run_in(tmp_path, "--run", STAMP)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"report: wrote linux.md from run {STAMP} (106 rounds)\n"
    assert (tmp_path / "linux.md").read_bytes() == EXPECTED.read_bytes()


def test_variants_not_in_parameters_follow_alphabetically(results, tmp_path):
    """Variants meta.json does not list come after the listed ones, alphabetically,
    whatever their order in the file; a shape they did not run reads "not run"."""
    row = json.loads((results / STAMP / "balancing.jsonl").read_text().splitlines()[9])
    with open(results / STAMP / "balancing.jsonl", "a") as f:
        for variant in ("zeta", "alpha"):
            f.write(json.dumps(dict(row, variant=variant)) + "\n")
    assert run_in(tmp_path).returncode == 0
    report = (tmp_path / "linux.md").read_text()
    balancing = report.split("## Balancing")[1].split("**What this shows.**")[0]
    names = [line.split(" | ")[0][2:] for line in balancing.splitlines() if line.startswith("| ")]
    assert names == ["variant", "bare", "bare-threads", "exclusive", "lt", "lt-yield", "handoff", "alpha", "zeta"]
    assert "| alpha | process | 31/1 | not run | not run | 0/1 |" in balancing


def test_failed_input_keeps_previous_report(results, tmp_path):
    """A corrupt input leaves an existing report untouched and no temp file behind:
    the output is only ever replaced whole, by rename."""
    (tmp_path / "linux.md").write_text("previous report\n")
    edit_jsonl_line(results / STAMP / "balancing.jsonl", 2, lambda line: "{broken\n")
    proc = run_in(tmp_path)
    assert proc.returncode == 1
    assert (tmp_path / "linux.md").read_text() == "previous report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["linux.md", "results"]


# ---------------------------------------------------------------- input errors


def test_missing_canonical(results, tmp_path):
    """No CANONICAL means no default run: exit 1 with one line naming the file. A file
    that does not exist has no line to point at, so the message names the file alone."""
    (results / "CANONICAL").unlink()
    assert_input_error(run_in(tmp_path), tmp_path,
                       "report: results/linux/CANONICAL: cannot read: file does not exist")


def test_canonical_names_missing_run(results, tmp_path):
    """CANONICAL naming a run directory that is not there is CANONICAL's line 1 at fault."""
    (results / "CANONICAL").write_text("20990101T000000Z\n")
    assert_input_error(run_in(tmp_path), tmp_path,
                       "report: results/linux/CANONICAL:1: names run '20990101T000000Z', "
                       "but results/linux/20990101T000000Z does not exist")


def test_corrupt_json_line(results, tmp_path):
    """A line that is not JSON is reported with its file and line number (3), the
    parser's reason, and no traceback."""
    edit_jsonl_line(results / STAMP / "balancing.jsonl", 3, lambda line: line.replace(",", " ", 1))
    assert_input_error(run_in(tmp_path), tmp_path,
                       f"report: results/linux/{STAMP}/balancing.jsonl:3: "
                       "invalid JSON: Expecting ',' delimiter")


def test_row_missing_counts(results, tmp_path):
    """A measured row without "counts" is corrupt (only a failed step, which carries
    "error", may lack it): the message names the line and the key."""
    def drop_counts(line):
        row = json.loads(line)
        del row["counts"]
        return json.dumps(row) + "\n"
    edit_jsonl_line(results / STAMP / "balancing.jsonl", 5, drop_counts)
    assert_input_error(run_in(tmp_path), tmp_path,
                       f'report: results/linux/{STAMP}/balancing.jsonl:5: missing required key "counts"')


def test_row_with_contradictory_ratio(results, tmp_path):
    """ratio null means a worker got none, so it must come with starved >= 1; a row
    that says otherwise would make the table and the summary disagree, and is rejected."""
    def break_ratio(line):
        row = json.loads(line)
        row["ratio"] = None
        return json.dumps(row) + "\n"
    edit_jsonl_line(results / STAMP / "balancing.jsonl", 1, break_ratio)
    assert_input_error(run_in(tmp_path), tmp_path,
                       f'report: results/linux/{STAMP}/balancing.jsonl:1: "ratio" null and "starved" 0 '
                       "disagree (ratio is null exactly when a worker got none)")


def test_duplicate_round(results, tmp_path):
    """The same variant, shape and round twice is a corrupt file, not a fourth round:
    the second occurrence is named, with the line of the first."""
    path = results / STAMP / "balancing.jsonl"
    first = path.read_text().splitlines()[0]
    with open(path, "a") as f:
        f.write(first + "\n")
    assert_input_error(run_in(tmp_path), tmp_path,
                       f"report: results/linux/{STAMP}/balancing.jsonl:40: "
                       "round 3 of lt-yield keepalive is already on line 1")


def test_meta_invalid_json(results, tmp_path):
    """meta.json that is not JSON (a comma removed at the end of line 3) is reported at
    the line where the parser stopped (4), as the JSON parser counts it."""
    meta = results / STAMP / "meta.json"
    lines = meta.read_text().splitlines(keepends=True)
    assert lines[2].rstrip().endswith(",")
    lines[2] = lines[2].rstrip()[:-1] + "\n"
    meta.write_text("".join(lines))
    assert_input_error(run_in(tmp_path), tmp_path,
                       f"report: results/linux/{STAMP}/meta.json:4: invalid JSON: Expecting ',' delimiter")


def test_meta_wrong_type(results, tmp_path):
    """A meta.json field of the wrong type (cpus as a string) is reported at that
    field's line (8), not as a traceback."""
    meta = results / STAMP / "meta.json"
    meta.write_text(meta.read_text().replace('"cpus": 2', '"cpus": "two"'))
    assert_input_error(run_in(tmp_path), tmp_path,
                       f'report: results/linux/{STAMP}/meta.json:8: "cpus" must be an integer >= 1, got "two"')


def test_run_without_any_study(results, tmp_path):
    """A run must hold at least one study's results: with every study file
    gone, exit 1 naming the run and the files expected."""
    for name in ("balancing", "respawn", "mutex_delay", "slowview", "cost", "payoff", "trace", "timeline", "models",
                 "placement", "trace_overhead"):
        (results / STAMP / (name + ".jsonl")).unlink()
    proc = run_in(tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"report: results/linux/{STAMP}: no study results in the run "
                                  "(expected one of balancing.jsonl, trace.jsonl, timeline.jsonl, placement.jsonl"), proc.stderr


# ---------------------------------------------------------------- usage


def test_help_exits_zero():
    """--help documents the three options and exits 0, as every acceptlab program does."""
    proc = run_report("--help")
    assert proc.returncode == 0
    for option in ("--results-dir", "--out", "--run"):
        assert option in proc.stdout


def test_unknown_option_exits_two():
    """An unknown option is a usage error: exit 2, one stderr line naming it."""
    proc = run_report("--bogus")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    assert "--bogus" in proc.stderr


def test_run_must_be_a_directory_name(tmp_path):
    """--run takes a run directory's name, not a path: "../x" is a usage error (exit 2)
    naming --run, so the report cannot be built from outside the results directory."""
    proc = run_report("--run", "../x", "--out", tmp_path / "linux.md")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["report: argument --run: '../x' is not a run directory name (see --help)"]


def test_committed_report_regenerates_byte_for_byte(tmp_path):
    """report/linux.md is a pure function of the run CANONICAL names: the
    generator rebuilds the committed file exactly from the committed results,
    so nobody can edit a figure by hand without this failing."""
    repo = Path(__file__).resolve().parent.parent
    committed = repo / "report" / "linux.md"
    if not (repo / "results" / "linux" / "CANONICAL").exists():
        pytest.fail("results/linux/CANONICAL is missing: a measured run must be committed")
    out = tmp_path / "linux.md"
    res = subprocess.run(["/usr/bin/python3", str(repo / "report" / "report.py"), "--out", str(out)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert out.read_bytes() == committed.read_bytes(), "report/linux.md differs from its regeneration"


def test_trace_row_that_contradicts_itself(results, tmp_path):
    """A trace row whose "equal" says the tracer and the probe agree while
    its own counts differ is a corrupt file: exit 1 naming file and line."""
    path = results / STAMP / "trace.jsonl"
    lines = path.read_text().splitlines()
    row = json.loads(lines[0])
    row["cross_check"]["tracer_won"]["0"] += 1
    lines[0] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")
    assert_input_error(run_in(tmp_path), tmp_path,
                       f'report: results/linux/{STAMP}/trace.jsonl:1: "cross_check" "equal" disagrees with its '
                       "own counts")
