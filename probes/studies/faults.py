"""faults: the fault cases, run by their own tests (accept sharing's in
tests/test_fdpass.py, running out of descriptors in tests/test_emfile.py,
-k fault): one implementation is both the test and the measurement ->
faults.jsonl (one line per case). It runs when the arm FAULTS_ARM is chosen."""

import json
import os
import subprocess

from acceptlab.paths import PYTHON, ROOT
from probes.harness.lifecycle import StepFailed

NAME = "faults"
FAULTS_ARM = "fdpass"
# --quick's faults: accept sharing's cases but the 10,000-connection churn
# (fault 7), and running out of descriptors for bare only.
QUICK_FAULTS = "fault and not fault7 and (test_fdpass or bare])"
TIMEOUT_S = 600


def arms_of(plan):
    """None: its rows are fault cases, each test starting the servers it needs."""
    return []


def meta(plan):
    return {}


def pytest_verdicts(text):
    """{test id: PASSED | FAILED | ERROR} from pytest -rA's summary lines
    ("PASSED <id>", "FAILED <id> - <message>"); an id may hold spaces (a
    parameter such as "bare --threads 2")."""
    verdict = {}
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "ERROR") and "::" in rest:
            verdict[rest.split(" - ", 1)[0].strip()] = word
    return verdict


def steps(plan, raw_dir):
    """Each test records what it observed, with the counts that prove its
    window (window), before it asserts, and pytest's own
    report of it writes the row to ACCEPTLAB_FAULTS_OUT with its verdict
    (tests/faults.py), so a case that failed, even before it recorded
    anything, is a row saying so. A test pytest reported that left no row
    is added as failed."""
    if FAULTS_ARM not in plan.arms:
        return

    def step():
        observed = os.path.join(raw_dir, "faults.observed.jsonl")
        if os.path.exists(observed):
            os.unlink(observed)
        cmd = [PYTHON, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
               os.path.join(ROOT, "tests", "test_fdpass.py"), os.path.join(ROOT, "tests", "test_emfile.py"),
               "-k", QUICK_FAULTS if plan.quick else "fault"]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=TIMEOUT_S,
                                 env=dict(os.environ, ACCEPTLAB_FAULTS_OUT=observed))
        except subprocess.TimeoutExpired:
            raise StepFailed("the fault tests did not finish within %d s" % TIMEOUT_S)
        with open(os.path.join(raw_dir, "faults.pytest.txt"), "w") as f:
            f.write(res.stdout + res.stderr)
        verdict = pytest_verdicts(res.stdout)
        try:
            with open(observed) as f:
                rows = [json.loads(l) for l in f if l.strip()]
        except OSError:
            raise StepFailed("the fault tests recorded nothing: %s" % res.stdout.strip()[-200:])
        tests = {row.pop("test", "") for row in rows}
        for test, word in sorted(verdict.items()):
            if test not in tests:
                rows.append({"case": test, "expected": "(its row is missing)", "held": False,
                             "observed": "pytest said %s, and the test wrote no row" % word})
        held = sum(r["held"] is True for r in rows)
        skipped = sum(r["held"] is None for r in rows)
        # Each row's window: the observed counts that prove the case was
        # reached (tests/faults.py fails a test with a count of 0).
        proven = sum(bool(r.get("window")) and all(v > 0 for v in r["window"].values()) for r in rows)
        return rows, "%d of %d invariants held, %d proved their window%s" % (
            held, len(rows) - skipped, proven, ", %d skipped" % skipped if skipped else "")
    yield "%-17s fault cases" % FAULTS_ARM, step, {"case": "all", "expected": "", "observed": ""}
