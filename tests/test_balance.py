"""The balancing variants' targets outside the quiet lab (servers/load.h).

fdpass, reuseport-bpf and handoff promise every round within 17/15 at 2
workers and max - min <= 2 at 4 and 8, with rounds of 16 x workers
connections, in each of:

  - the first burst of a fresh server, sent the moment it says ready;
  - back-to-back rounds on one server with no pause: burst, ramp and
    keepalive rounds (--round-gap-ms 0), and the shapes mixed, one probe
    after another;
  - two CPU hogs running (stress-ng --cpu 2 on this 2-CPU machine);
  - the tracer (bin/acceptlab-trace) attached to the workers.

Why they can hold it: every worker's load counts a connection the moment
it is decided (not at the end of a pass), and stops counting it the moment
its client closes (the kernel sees the FIN), so back-to-back rounds start
from true loads, whoever is preempted. These need kernel accounting: root
(reuseport-bpf needs it anyway); skipped otherwise.
"""

import json
import os

import pytest

from acceptlab import arms, balance
from probes.harness.cpu import StressHogs
from tests.conftest import run_probe
from tests.test_trace import Trace

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="kernel accounting loads BPF: needs root")
VARIANTS = arms.claiming_balance()
PER_WORKER = 16


def start(start_server, variant, workers):
    if arms.get(variant).mode == "threads":
        return start_server("%s --threads %d" % (variant, workers))
    return start_server(variant, workers=workers)


def probe(s, tmp_path, shape, rounds=1, extra=()):
    """Runs the probe at 16 x workers connections; returns the rounds."""
    ready = tmp_path / "ready.json"
    ready.write_text(json.dumps(s.ready) + "\n")
    workers = len(s.ready["workers"])
    res = run_probe("--target", "127.0.0.1:%d" % s.port, "--shape", shape, "--json",
                    "--connections", str(PER_WORKER * workers), "--rounds", str(rounds),
                    "--round-gap-ms", "0", "--workers-from", str(ready), *extra)
    assert res.returncode == 0, res.stderr[-1500:]
    rows = [json.loads(l) for l in res.stdout.splitlines()]
    return [r for r in rows if r["type"] == "round"]


SHAPE_ARGS = {"burst": [], "ramp": ["--gap-ms", "1"], "keepalive": ["--requests", "3", "--gap-ms", "1"]}


def check(rounds, workers, label):
    bad = [r["split"] for r in rounds if r["unanswered"] or not balance.within_target(list(r["counts"].values()), workers)]
    assert not bad, "%s: rounds outside the target: %s (all: %s)" % (label, bad, [r["split"] for r in rounds])


def back_to_back(s, tmp_path, workers, label):
    """Burst, ramp and keepalive rounds with no pause, then the shapes mixed."""
    for shape, args in SHAPE_ARGS.items():
        check(probe(s, tmp_path, shape, rounds=3 if shape == "burst" else 2, extra=args), workers,
              "%s %s" % (label, shape))
    mixed = []
    for shape in ["burst", "keepalive", "ramp", "burst"]:
        mixed += probe(s, tmp_path, shape, extra=SHAPE_ARGS[shape])
    check(mixed, workers, label + " mixed")


@pytest.fixture
def hogs():
    """Two CPU hogs (stress-ng --cpu 2) for the test's length; StressHogs
    fails if stress-ng is missing or exits at once."""
    with StressHogs(2) as h:
        yield h


@needs_root
@pytest.mark.parametrize("workers", [2, 4, 8])
@pytest.mark.parametrize("variant", VARIANTS)
def test_fresh_server_first_burst(start_server, tmp_path, variant, workers):
    """The burst sent the moment the ready line arrives, on three fresh
    servers: every worker is a candidate before it reports ready."""
    for _ in range(3):
        s = start(start_server, variant, workers)
        assert s.ready.get("accounting") == "kernel", s.ready
        check(probe(s, tmp_path, "burst"), workers, "fresh %s x%d" % (variant, workers))
        s.kill()


@needs_root
@pytest.mark.parametrize("workers", [2, 4, 8])
@pytest.mark.parametrize("variant", VARIANTS)
def test_back_to_back_rounds(start_server, tmp_path, variant, workers):
    s = start(start_server, variant, workers)
    back_to_back(s, tmp_path, workers, "%s x%d" % (variant, workers))


@needs_root
@pytest.mark.parametrize("workers", [2, 4, 8])
@pytest.mark.parametrize("variant", VARIANTS)
def test_beside_cpu_hogs(start_server, tmp_path, hogs, variant, workers):
    """Every worker preempted at random by two busy CPUs: the fresh burst
    and back-to-back rounds hold the target all the same."""
    s = start(start_server, variant, workers)
    check(probe(s, tmp_path, "burst"), workers, "hogs fresh")
    back_to_back(s, tmp_path, workers, "hogs %s x%d" % (variant, workers))


@needs_root
@pytest.mark.parametrize("workers", [2, 4])
@pytest.mark.parametrize("variant", VARIANTS)
def test_with_the_tracer_attached(start_server, tmp_path, variant, workers):
    """bin/acceptlab-trace on every worker (it slows each syscall and
    wakeup): back-to-back rounds hold the target, and the tracer saw every
    connection accepted."""
    s = start(start_server, variant, workers)
    t = Trace("--pgid", str(s.proc.pid))
    try:
        rounds = probe(s, tmp_path, "burst", rounds=4)
        check(rounds, workers, "traced %s x%d" % (variant, workers))
        check(probe(s, tmp_path, "keepalive", rounds=2, extra=SHAPE_ARGS["keepalive"]), workers,
              "traced keepalive")
    finally:
        objs = t.stop()
    won = sum(o["won"] for o in objs if o["type"] == "worker")
    assert won >= 4 * PER_WORKER * workers, "the tracer saw %d accepts" % won
