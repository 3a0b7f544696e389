"""The fault cases' table: one row per fault test, written whatever the test's
outcome, to the file ACCEPTLAB_FAULTS_OUT names (the campaign's faults study
sets it; without it nothing is written).

A fault test declares its case and what the correction guarantees up front,
with @fault(case, expected) ({name} in either is filled from the test's
parameters), and calls record(observed, window={...}, **figures) with what it
saw before it asserts. window holds the observed counts that prove the case's
window was hit (the state the case needs, seen, not assumed): every count
must be above 0, or the test fails at record() (its row keeps what it
observed, and says which count was 0); a fault test that passes without
recording a window fails too, and so, as root, does one that skips. pytest's own report of the test then writes
the row (pytest_runtest_makereport, imported by conftest.py): "held" is the
test's verdict; a test that failed before it recorded anything still gets
its row, its observed column saying where it failed; a test that failed
after recording keeps what it observed plus the failure."""

import json
import os

import pytest

_observed = {}  # nodeid -> (observed, figures)


def fault(case, expected):
    """Marks a test as a fault case of the faults table."""
    return pytest.mark.fault(case=case, expected=expected)


def window_missed(window):
    """Why window does not prove a case (None when it does): it must be a
    non-empty {name: count} with every count an integer above 0."""
    if not isinstance(window, dict) or not window:
        return "no window recorded (record(..., window={name: count}))"
    zero = ["%s=%r" % (k, v) for k, v in sorted(window.items())
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0]
    return "the window was not hit: %s (each count must be above 0)" % ", ".join(zero) if zero else None


def record(observed, window=None, **figures):
    """What the running fault test observed (written once pytest has its
    verdict), with the counts that prove its window; fails the test when a
    count is not above 0."""
    nodeid = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
    if window is not None:
        figures = dict(figures, window=window)
    _observed[nodeid] = (observed, figures)
    missed = window_missed(window)
    assert missed is None, missed


def _failure(rep):
    """The failure's one line: the assertion or exception message."""
    crash = getattr(rep.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(rep.longrepr)
    return " ".join(text.split())[:300]


def _row(item, rep, observed, figures):
    mark = item.get_closest_marker("fault")
    params = getattr(getattr(item, "callspec", None), "params", {})
    case = mark.kwargs["case"].format(**params)
    expected = mark.kwargs["expected"].format(**params)
    if rep.skipped:
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        return dict(figures, case=case, expected=expected, observed=observed or "", held=None,
                    skipped=reason.replace("Skipped: ", ""), test=item.nodeid)
    if rep.failed:
        where = "failed" if observed is not None else "failed before it recorded anything (%s)" % rep.when
        observed = "%s%s: %s" % (observed + "; " if observed else "", where, _failure(rep))
    return dict(figures, case=case, expected=expected, observed=observed or "", held=rep.passed,
                test=item.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not item.get_closest_marker("fault"):
        return
    # One row per test: from the call, or from a setup that failed or skipped
    # (the call then never runs).
    if not (rep.when == "call" or (rep.when == "setup" and not rep.passed)):
        return
    observed, figures = _observed.pop(item.nodeid, (None, {}))
    if rep.when == "call" and rep.passed:
        missed = window_missed(figures.get("window"))
        if missed:  # it passed without proving its case: not a pass
            rep.outcome = "failed"
            rep.longrepr = "a fault test passed without proving its window: %s" % missed
    path = os.environ.get("ACCEPTLAB_FAULTS_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(_row(item, rep, observed, figures), sort_keys=True) + "\n")
    if rep.skipped and os.geteuid() == 0:
        # As root every fault test can run (make deps installs what they
        # need): a skip is a case whose window was never tried, so it fails,
        # in the suite as in the gate (its row still says why it skipped).
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        rep.outcome = "failed"
        rep.longrepr = "a fault test skipped as root (every fault test can run as root): %s" % reason
