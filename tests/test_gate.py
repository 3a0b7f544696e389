"""The gate must be able to fail. ci/gate.py's 2:1 check is run against a
variant known to skew deterministically here: nginx's plain accept mutex,
whose token holder takes every connection of a burst while the other worker
waits out its 500 ms delay (32/0, the campaign's table shows it in every
round). A gate that passed that would be a gate that cannot fail."""

import os
import subprocess

from conftest import PYTHON, ROOT

GATE = os.path.join(ROOT, "ci", "gate.py")


def test_gate_fails_on_a_skewed_variant():
    """Every round of mutex is outside 2:1, so the gate exits 1, marks the
    rounds OUTSIDE 2:1 and its summary counts them as failed."""
    res = subprocess.run([PYTHON, GATE, "--variants", "mutex", "--workers", "2", "--no-faults", "--no-knob-off"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "OUTSIDE 2:1" in res.stdout
    last = res.stdout.strip().splitlines()[-1]
    assert last.startswith("gate: ") and not last.endswith(" 0 failed"), last


def test_gate_holds_more_workers():
    """--workers names the counts the gate holds: at 4 workers the shapes
    scale to 16 connections per worker (burst 64), back-to-back and beside
    hogs, and mutex's token holder taking every connection (64/0/0/0) fails
    them. No fresh-server rounds at a count other than 2."""
    res = subprocess.run([PYTHON, GATE, "--variants", "mutex", "--workers", "4", "--no-faults", "--no-knob-off"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 1, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert "gate: worker counts 4" in lines, res.stdout
    rounds = [l for l in lines if l.startswith("gate: mutex")]
    assert {l.split()[2] for l in rounds} == {"4w"}, res.stdout
    for when in ("back-to-back", "hogs"):
        for shape in ("burst 64", "ramp 64", "keepalive 64x4"):
            assert any(("4w %s %s" % (when, shape)) in l and "OUTSIDE 2:1" in l for l in rounds), \
                (when, shape, res.stdout)


def test_gate_rejects_bad_worker_counts():
    """A worker count that is not 1..64 is a usage error: exit 2, one line naming --workers."""
    for bad in ("2,x", "0", "4,4"):
        res = subprocess.run([PYTHON, GATE, "--workers", bad], capture_output=True, text=True)
        assert res.returncode == 2 and res.stderr.startswith("gate: --workers " + bad), (bad, res.stderr)


def test_gate_rejects_unknown_variant():
    """A variant the gate does not know is a usage error: exit 2, one line."""
    res = subprocess.run([PYTHON, GATE, "--variants", "nope"], capture_output=True, text=True)
    assert res.returncode == 2 and "--variants nope" in res.stderr


def test_gate_fails_on_the_no_pick_build():
    """The broken build the knob exists for: with ACCEPTLAB_TEST_NO_PICK=1
    fdpass keeps every connection with the worker that accepted it (the bare
    race in its clothes), so rounds leave 2:1 and the gate must exit 1 with
    them marked OUTSIDE 2:1. Its fresh, back-to-back and beside-hogs rounds
    (18 of them) all landing within 2:1 by the race's luck would need every
    one of them balanced; a gate that passes this build cannot fail."""
    res = subprocess.run([PYTHON, GATE, "--variants", "fdpass", "--workers", "2", "--no-faults", "--no-knob-off"],
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, ACCEPTLAB_TEST_NO_PICK="1"))
    assert res.returncode == 1, res.stdout + res.stderr
    outside = [l for l in res.stdout.splitlines() if l.startswith("gate: fdpass") and "OUTSIDE 2:1" in l]
    assert outside, res.stdout
    last = res.stdout.strip().splitlines()[-1]
    assert last.startswith("gate: ") and not last.endswith(" 0 failed"), last
