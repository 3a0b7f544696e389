"""The balancing variants' load counters (servers/load.h) against the truth.

A worker's load is the connections it holds whose peer has not closed them,
plus those in flight to it. With kernel accounting (BPF, root) a connection
stops counting the moment it leaves ESTABLISHED and a SYN that never becomes
a connection stops counting within 1 s; GET /variant shows each worker's
count. tests/accounting_scenarios.py runs each scenario in a network
namespace of its own and compares the counters with sock_diag and with what
the client itself holds; this file asserts:

  - under steady load (connections held, requests flowing) every worker's
    count is within +-1 of the truth, and sock_diag agrees with the client;
  - after a burst closed at once, clients that reset, a raw-socket SYN flood
    answered with RST, and SYNs left half-open, the counters equal the
    truth (the asking connection alone) within 1 s;
  - a worker blocked inline in a handler while its clients close loses
    their count while it still sleeps (kernel accounting), and does not
    without BPF (user accounting: the documented limit of the fallback).
  - the perturbation study's own samples: in every round, held with the
    round's full connection count open, each worker's count equals the
    truth; after the run, at no connection, too; each sample on one row.

Each scenario also shows its window was hit: the SYNs were counted before
they expired (reuseport-bpf), requests were really left half-open, the
blocked worker had its connections counted before they closed.
"""

import json
import os
import subprocess

import pytest

from acceptlab import arms
from acceptlab.paths import module_cmd
from tests.conftest import ROOT

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces, raw sockets and BPF need root")
HELPER = module_cmd("tests.accounting_scenarios")
QUIET_WITHIN_S = 1.0
CASES = [(v, n) for v in ("fdpass", "reuseport-bpf", "handoff") for n in (2, 4, 8)]


def run(variant, workers, env=None, scenarios=None):
    cmd = ["unshare", "-n", *HELPER, "--variant", variant, "--workers", str(workers)]
    if scenarios:
        cmd += ["--scenarios", ",".join(scenarios)]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    return {r["scenario"]: r for r in map(json.loads, res.stdout.splitlines())}


@needs_root
@pytest.mark.parametrize("variant,workers", CASES)
def test_counters_match_the_kernel(variant, workers):
    rows = run(variant, workers)
    assert all(r["accounting"] == "kernel" for r in rows.values()), rows

    steady = rows["steady"]
    assert steady["worst_error"] <= 1, steady["samples"]
    assert steady["ss_agrees"], steady["samples"]
    held = rows["burst_close"]["held_sample"]
    assert all(abs(l - t) <= 1 for l, t in zip(held["load"], held["truth"])), held
    assert held["ss_agrees"], held

    for name, row in rows.items():
        assert row["quiet_s"] is not None and row["quiet_s"] <= QUIET_WITHIN_S, \
            "%s: the counters did not reach the truth within %.1f s: %r" % (name, QUIET_WITHIN_S, row)

    for name in ("syn_flood", "syn_abort"):
        first = rows[name]["first"]
        if variant == "reuseport-bpf":
            # The program counted them (it steers by SYN): the expiry was under test.
            assert sum(first["load"]) > sum(first["truth"]), (name, first)
        else:
            # Only admitted connections count: a SYN is nothing yet.
            assert first["load"] == first["truth"], (name, first)
    assert rows["syn_abort"]["half_open_after"] > 0, "no request was left half-open: the scenario missed"

    busy = rows["busy_close"]
    assert busy["before"][0] >= 2, busy  # the blocked worker's connections were counted
    assert busy["after"] == busy["expect"], busy


@needs_root
@pytest.mark.parametrize("variant", ["fdpass", "handoff"])
def test_user_accounting_waits_for_the_worker(variant):
    """ACCEPTLAB_ACCOUNTING=user (what runs without BPF): the counters are
    right under steady load and once workers have read their EOFs, but a
    worker blocked in a handler keeps counting the connections its clients
    closed until it gets back to them."""
    rows = run(variant, 2, env=dict(os.environ, ACCEPTLAB_ACCOUNTING="user"),
               scenarios=["steady", "burst_close", "busy_close"])
    assert all(r["accounting"] == "user" for r in rows.values()), rows
    assert rows["steady"]["worst_error"] <= 1, rows["steady"]["samples"]
    assert rows["burst_close"]["quiet_s"] is not None, rows["burst_close"]
    busy = rows["busy_close"]
    assert busy["after"][0] == busy["before"][0] > busy["expect"][0], busy


@pytest.mark.parametrize("variant", ["fdpass", "handoff --threads 2"])
def test_without_privilege_falls_back_to_user_accounting(tmp_path, variant):
    """Without root (no BPF) fdpass and handoff still balance, counting in
    user space: the ready line says "accounting":"user", stderr says once
    why, and a burst of 32 asked at once is answered 16/16 or 17/15. As root
    this runs a copy of the binary as nobody (setpriv)."""
    import shutil
    import signal
    import tempfile
    from tests.conftest import SERVER, open_pid_requests, pids_answering

    cmd = ["--variant", *variant.split(), "--port", "0"]
    if "--threads" not in variant:
        cmd += ["--workers", "2"]
    d = None
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("setpriv (util-linux) is not installed: cannot drop root")
        d = tempfile.mkdtemp(prefix="acceptlab-nobody-")
        os.chmod(d, 0o755)
        binary = os.path.join(d, "acceptlab-server")
        shutil.copy(SERVER, binary)
        os.chmod(binary, 0o755)
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", binary, *cmd]
    else:
        argv = [SERVER, *cmd]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/",
                            start_new_session=True)
    try:
        ready = json.loads(proc.stdout.readline())
        assert ready["accounting"] == "user", ready
        ids = [w["tid" if "--threads" in variant else "pid"] for w in ready["workers"]]
        answers = pids_answering(open_pid_requests(ready["port"], 32))
        assert sorted(answers.count(i) for i in ids) in ([16, 16], [15, 17]), answers
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if d:
            shutil.rmtree(d)
    err = proc.stderr.read()
    assert err.count("counting load in user space") == 1, err
    assert "needs root (CAP_BPF)" in err, err


@pytest.mark.parametrize("args,named", [(["--target", "localhost"], "--target"),
                                        (["--target", "127.0.0.1:0"], "--target"),
                                        (["--target", "127.0.0.1:80", "--count", "0"], "--count"),
                                        (["--target", "127.0.0.1:80", "--source", "nowhere"], "--source"),
                                        (["--target", "127.0.0.1:80", "--first-port", "80"], "--first-port")])
def test_synflood_bad_arguments_exit_2(args, named):
    """probes/synflood.py refuses bad input before sending anything: exit 2,
    one line naming the argument."""
    res = subprocess.run([*module_cmd("probes.synflood"), *args], cwd=ROOT, capture_output=True,
                         text=True, timeout=10)
    assert res.returncode == 2, res
    assert res.stderr.count("\n") == 1 and named in res.stderr, res.stderr
    assert res.stdout == ""


# The perturbation study's samples (probes/studies/perturbation.py): taken in
# every round while the probe holds its connections (--pause-at asked: each
# answered once and still open, so accepted and owned by the worker that
# answered), and once after each probe run. A sample under load is one
# whose held count (the server's ESTABLISHED sockets, from sock_diag) is the
# round's full connection count; there, with nothing in flight, each
# worker's counted load must equal the connections it holds (plus the asking
# one): error 0. After the run only the asking connection is open: held 0.
@needs_root
@pytest.mark.parametrize("arm", sorted(arms.claiming_balance()))
def test_perturbation_samples_counters_under_load(tmp_path, arm):
    from probes.harness.lifecycle import stop_all
    from probes.harness.servers import ServerRun
    from probes.studies.perturbation import PERTURBATION_PER_WORKER, perturbation_one

    workers = 2
    connections = PERTURBATION_PER_WORKER * workers
    runs = [("burst", 2), ("keepalive", 1), ("ramp", 1)]
    try:
        with ServerRun(arms.server_args(arm), workers, str(tmp_path / arm), arms.env(arm)) as (proc, ready, path):
            rows = perturbation_one(str(tmp_path / arm), proc, ready, path, workers, "back-to-back", runs, arm)
    finally:
        stop_all()
    assert [r["shape"] for r in rows] == ["burst", "burst", "keepalive", "ramp"], rows
    # Each sample on one row: every round its held one; the after-run one on
    # the last round of its run only (round 1 of the burst run has none).
    assert [[s["at"] for s in r["counter_samples"]] for r in rows] == \
        [["held"], ["held", "after"], ["held", "after"], ["held", "after"]], rows
    for r in rows:
        assert r["accounting"] == "kernel", r
        held, *after = r["counter_samples"]
        assert held["held"] == held["open"] == connections, ("not sampled under the round's load", r["round"], held)
        assert held["error"] == 0, ("counters off under load", arm, r["round"], held)
        if ready.get("mode") != "threads":
            assert sum(held["truth"]) == connections + 1 and held["counted"] == held["truth"], held
        for a in after:
            assert a["held"] == 0 and a["error"] == 0, ("counters off after the run", arm, r["round"], a)
