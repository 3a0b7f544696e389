"""The fault cases' table: one row per fault test, written whatever the test's
outcome, to the file ACCEPTLAB_FAULTS_OUT names (the campaign's faults study
sets it; without it nothing is written).

A fault test declares its case and what the correction guarantees up front,
with @fault(case, expected) ({name} in either is filled from the test's
parameters), and calls record(observed, **figures) with what it saw before
it asserts. pytest's own report of the test then writes the row
(pytest_runtest_makereport, imported by conftest.py): "held" is the test's
verdict; a test that failed before it recorded anything still gets its row,
its observed column saying where it failed; a test that failed after
recording keeps what it observed plus the failure."""

import json
import os

import pytest

_observed = {}  # nodeid -> (observed, figures)


def fault(case, expected):
    """Marks a test as a fault case of the faults table."""
    return pytest.mark.fault(case=case, expected=expected)


def record(observed, **figures):
    """What the running fault test observed (written once pytest has its verdict)."""
    nodeid = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
    _observed[nodeid] = (observed, figures)


def _failure(rep):
    """The failure's one line: the assertion or exception message."""
    crash = getattr(rep.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(rep.longrepr)
    return " ".join(text.split())[:300]


def _row(item, rep):
    mark = item.get_closest_marker("fault")
    params = getattr(getattr(item, "callspec", None), "params", {})
    case = mark.kwargs["case"].format(**params)
    expected = mark.kwargs["expected"].format(**params)
    observed, figures = _observed.pop(item.nodeid, (None, {}))
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
    path = os.environ.get("ACCEPTLAB_FAULTS_OUT")
    if not path or not item.get_closest_marker("fault"):
        return
    # One row per test: from the call, or from a setup that failed or skipped
    # (the call then never runs).
    if rep.when == "call" or (rep.when == "setup" and not rep.passed):
        with open(path, "a") as f:
            f.write(json.dumps(_row(item, rep), sort_keys=True) + "\n")
