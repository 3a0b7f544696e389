"""The faults table records every case (tests/faults.py): a fault test that
passes, fails after it recorded, fails before it recorded anything, fails in
its setup, or is skipped each leaves exactly one row, with pytest's verdict,
and the report counts them as such. A test whose window has a count of 0
fails at record(), and one that passes without recording a window fails
too: neither proved its case. Checked by running pytest on a small file of
such tests, then rendering the rows with the report's own code."""

import json
import os
import subprocess

from probes.studies import faults as faults_study
from report.sections import faults as faults_section
from tests.conftest import PYTHON, packages_env

CASES = '''
import pytest
from tests.faults import fault, record


@pytest.fixture
def broken():
    raise RuntimeError("no server")


@fault("a passes", "held")
def test_passes():
    record("all well", figure=1, window={"seen_in_the_window": 3, "other": 1})


@fault("b fails after recording", "held")
def test_fails_after():
    record("saw 3 of 4", window={"seen": 4})
    assert 3 == 4, "one lost"


@fault("c fails first", "held")
def test_fails_first():
    raise AssertionError("the window was missed")


@fault("d setup ({n})", "held")
@pytest.mark.parametrize("n", ["seven --threads 2"])
def test_setup_fails(broken, n):
    record("never")


@fault("e skipped", "held")
def test_skipped():
    pytest.skip("needs root")


@fault("f passes without a window", "held")
def test_no_window():
    record("all well, nothing proved")


@fault("g window missed", "held")
def test_window_missed():
    record("saw nothing in the window", window={"seen_in_the_window": 0, "other": 2})
    raise RuntimeError("not reached: record() fails first")


@fault("h passes without recording", "held")
def test_no_record():
    pass


def test_not_a_fault_case():
    pass
'''

# The scratch suite's conftest; the faults table's hook comes from
# tests/faults.py, loaded as a plugin (-p tests.faults) from the repository's top.
CONFTEST = '''
def pytest_configure(config):
    config.addinivalue_line("markers", "fault(case, expected): a fault case")
'''


def test_every_fault_case_leaves_one_row(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_cases.py").write_text(CASES)
    out = tmp_path / "faults.jsonl"
    res = subprocess.run([PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.faults", str(tmp_path)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60,
                         env=packages_env(dict(os.environ, ACCEPTLAB_FAULTS_OUT=str(out))))
    assert res.returncode == 1, res.stdout + res.stderr  # six of them fail on purpose (seven as root)
    rows = {r["case"]: r for r in map(json.loads, out.read_text().splitlines())}
    # The campaign matches each row to pytest's own verdict line by the test's id.
    verdicts = faults_study.pytest_verdicts(subprocess.run(
        [PYTHON, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-p", "tests.faults", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, env=packages_env()).stdout)
    # As root a skipped fault test fails (every fault test can run as root);
    # its row still says it skipped, and why.
    skipped_verdict = "FAILED" if os.geteuid() == 0 else None
    assert {r["test"]: verdicts.get(r["test"]) for r in rows.values()} == {
        r["test"]: {True: "PASSED", False: "FAILED" if "setup" not in r["case"] else "ERROR",
                    None: skipped_verdict}[r["held"]]
        for r in rows.values()}
    if os.geteuid() == 0:
        assert "a fault test skipped as root" in res.stdout, res.stdout
    assert sorted(rows) == ["a passes", "b fails after recording", "c fails first",
                            "d setup (seven --threads 2)", "e skipped", "f passes without a window",
                            "g window missed", "h passes without recording"]
    assert rows["a passes"]["held"] is True and rows["a passes"]["observed"] == "all well"
    assert rows["a passes"]["figure"] == 1 and rows["a passes"]["window"] == {"seen_in_the_window": 3, "other": 1}
    f = rows["f passes without a window"]
    assert f["held"] is False and "no window recorded" in f["observed"], f
    h = rows["h passes without recording"]
    assert h["held"] is False and "passed without proving its window" in h["observed"], h
    g = rows["g window missed"]
    assert g["held"] is False and g["window"] == {"seen_in_the_window": 0, "other": 2}, g
    assert "seen_in_the_window=0" in g["observed"] and "not reached" not in g["observed"], g
    b = rows["b fails after recording"]
    assert b["held"] is False and b["observed"].startswith("saw 3 of 4; failed: ") and "one lost" in b["observed"]
    c = rows["c fails first"]
    assert c["held"] is False and "before it recorded anything (call)" in c["observed"]
    assert "the window was missed" in c["observed"]
    d = rows["d setup (seven --threads 2)"]
    assert d["held"] is False and "(setup)" in d["observed"] and "no server" in d["observed"]
    e = rows["e skipped"]
    assert e["held"] is None and e["skipped"] == "needs root"

    parsed = [faults_section.parse_fault_row(r, i + 1) for i, r in enumerate(rows.values())]
    text = "\n".join(faults_section.render_faults(None, parsed))
    assert ("1 of 7 held; broken: b fails after recording; c fails first; d setup (seven --threads 2); "
            "f passes without a window; g window missed; h passes without recording (1 skipped). 2 of 7 proved "
            "their window (every count above 0); not proven: g window missed; 4 carry no window counts.") in text
    assert "| all well | other 1, seen in the window 3 | yes |" in text
    assert "| e skipped | held | skipped: needs root | skipped | skipped |" in text
    assert "| other 2, seen in the window 0 | **no** |" in text
    assert text.count("| **no** |") == 6
    # A run whose rows carry no window at all says so.
    old = [faults_section.parse_fault_row({k: v for k, v in r.items() if k != "window"}, i + 1)
           for i, r in enumerate(rows.values())]
    assert "These rows carry no window counts" in "\n".join(faults_section.render_faults(None, old))
