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
    res = subprocess.run([PYTHON, GATE, "--variants", "mutex", "--no-faults", "--no-knob-off"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "OUTSIDE 2:1" in res.stdout
    last = res.stdout.strip().splitlines()[-1]
    assert last.startswith("gate: ") and not last.endswith(" 0 failed"), last


def test_gate_rejects_unknown_variant():
    """A variant the gate does not know is a usage error: exit 2, one line."""
    res = subprocess.run([PYTHON, GATE, "--variants", "nope"], capture_output=True, text=True)
    assert res.returncode == 2 and "--variants nope" in res.stderr
