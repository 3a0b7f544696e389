"""The peers (probes/peers/peers.py): servers nobody here wrote, measured by
the same probe. nginx's access log ($pid per request) is the ground truth
the probe's counts must equal; every available configuration starts,
answers, and its answers map to the workers in its ready file; a
configuration the installed version rejects is reported, not faked.
Nothing here asserts timing. Peers whose software is missing are skipped."""

import json
import os
import subprocess

import pytest

from acceptlab.paths import module_cmd
from probes.peers import peers
from probes.peers.software import base as software_base
from tests.conftest import PROBE, ROOT

PEERS_PY = module_cmd("probes.peers.peers")


def need(software):
    if not peers.which(software):
        pytest.skip("%s is not installed (`make deps` installs nginx and haproxy as root)" % software)


def probe(peer, shape, *args):
    out = subprocess.run([PROBE, "--target", "127.0.0.1:%d" % peer.port, "--shape", shape,
                          "--workers-from", peer.ready_file, "--json", *args],
                         capture_output=True, text=True, timeout=120)
    lines = [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]
    assert out.returncode == 0, out.stderr
    return [l for l in lines if l["type"] == "round"], [l for l in lines if l["type"] == "summary"][-1]


def worker_ids(peer):
    key = "tid" if peer.ready["mode"] == "threads" else "pid"
    return {str(w[key]) for w in peer.ready["workers"]}


def test_nginx_access_log_equals_probe_counts():
    need("nginx")
    with peers.Peer("nginx-default") as peer:
        rounds, summary = probe(peer, "burst", "--connections", "32", "--rounds", "2")
        assert summary["answered"] == 64 and summary["unanswered"] == 0
        logged = peers.settled_log_counts(peer.access_log, 0, 64)
        # the start-up check asks /peer-ready, so the log's /pid lines are the probe's alone
        counts = {}
        for r in rounds:
            for wid, n in r["counts"].items():
                counts[wid] = counts.get(wid, 0) + n
        assert set(counts) <= worker_ids(peer)
        # a worker that got none is in the probe's counts as 0, and not in the log
        assert logged == {wid: n for wid, n in counts.items() if n}
        assert sum(logged.values()) == 64


def test_nginx_keepalive_requests_match_access_log():
    need("nginx")
    with peers.Peer("nginx-default") as peer:
        _, summary = probe(peer, "keepalive", "--connections", "8", "--requests", "3", "--rounds", "1")
        assert summary["answered"] == 8
        logged = peers.settled_log_counts(peer.access_log, 0, 24)
        assert logged == {wid: n for wid, n in summary["requests"].items() if n}
        assert sum(logged.values()) == 24


@pytest.mark.parametrize("name", list(peers.PEERS))
def test_peer_starts_answers_and_maps_to_its_workers(name):
    software = peers.PEERS[name][0]
    need(software)
    ok, reason = peers.availability(name)
    if not ok:
        pytest.skip("unavailable here: %s" % reason)
    with peers.Peer(name) as peer:
        ready = json.load(open(peer.ready_file))
        assert ready["event"] == "ready" and ready["variant"] == name and ready["port"] == peer.port
        assert len(ready["workers"]) == peers.WORKERS
        _, summary = probe(peer, "burst", "--connections", "16", "--rounds", "1")
        assert summary["answered"] == 16 and summary["unanswered"] == 0
        # every answer names a worker of the ready file (the probe lists those
        # workers first; an unknown id would be an extra key)
        assert set(summary["counts"]) == worker_ids(peer)
        pgid = peer.proc.pid
    assert not peers.group_alive(pgid), "the peer's process group outlived stop()"


def test_unavailable_configuration_is_reported_not_faked(tmp_path):
    need("haproxy")
    ok, reason = peers.availability("haproxy-mq-fair")
    if ok:
        pytest.skip("this haproxy (%s) accepts tune.listener.multi-queue fair" % peers.software_version("haproxy"))
    assert "fair" in reason and "haproxy/" in reason
    out = subprocess.run([*PEERS_PY, "measure", "--out", str(tmp_path), "--rounds", "1",
                          "--peers", "haproxy-mq-fair", "--no-trace"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(l) for l in open(tmp_path / "peers.jsonl")]
    assert len(rows) == 1
    assert rows[0]["kind"] == "unavailable" and rows[0]["peer"] == "haproxy-mq-fair"
    assert rows[0]["reason"] == reason


def test_missing_software_is_unavailable(monkeypatch):
    monkeypatch.setattr(software_base, "which", lambda prog: None)
    ok, reason = peers.availability("nginx-default")
    assert not ok and "nginx is not installed" in reason


def test_measure_writes_round_rows(tmp_path):
    need("nginx")
    out = subprocess.run([*PEERS_PY, "measure", "--out", str(tmp_path), "--rounds", "1",
                          "--peers", "nginx-reuseport", "--no-trace"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = [json.loads(l) for l in open(tmp_path / "peers.jsonl")]
    shapes = {r["shape"]: r for r in rows if r["kind"] == "round"}
    assert set(shapes) == {"burst", "ramp", "keepalive", "oneshot"}
    for shape, conns in (("burst", 32), ("ramp", 32), ("keepalive", 32), ("oneshot", 80)):
        r = shapes[shape]
        assert r["connections"] == conns and r["answered"] == conns and r["round"] == 1
        assert sum(r["counts"].values()) == conns
        assert len(r["split"].split("/")) == 2
    checks = [r for r in rows if r["kind"] == "logcheck"]
    assert len(checks) == 4 and all(c["equal"] for c in checks)


@pytest.mark.parametrize("args,word", [
    (["measure"], "--out"),
    (["measure", "--out", "/tmp/x", "--rounds", "zero"], "--rounds"),
    (["measure", "--out", "/tmp/x", "--rounds", "0"], "--rounds"),
    (["measure", "--out", "/tmp/x", "--peers", "apache"], "--peers"),
    (["start", "apache"], "NAME"),
    ([], "subcommand"),
])
def test_bad_arguments_exit_2_naming_them(args, word):
    out = subprocess.run([*PEERS_PY, *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0], out.stderr


def test_measure_keeps_raw_output_and_traces_once_per_peer(tmp_path):
    """Each peer is started once for all its shapes: its configuration, access
    log and the probe's verbatim output are kept under raw/, the probe's
    summary there is the row's; as root one trace row covers every shape, and
    nginx's accepts won per worker pid equal the probe's connections over all
    of them (4 shapes: 32 + 32 + 32 + 80 connections)."""
    need("nginx")
    out = subprocess.run([*PEERS_PY, "measure", "--out", str(tmp_path), "--rounds", "1",
                          "--peers", "nginx-default"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = [json.loads(l) for l in open(tmp_path / "peers.jsonl")]
    raw = tmp_path / "raw"
    assert "access_log" in (raw / "nginx-default.nginx.conf").read_text()
    logged = peers.access_log_counts(str(raw / "nginx-default.access.log"))[0]
    assert sum(logged.values()) == 32 + 32 + 32 * 4 + 80
    oneshot = [r for r in rows if r["kind"] == "round" and r["shape"] == "oneshot"][0]
    kept = [json.loads(l) for l in (raw / "nginx-default.oneshot-r1.probe.jsonl").read_text().splitlines()]
    assert kept[-1]["type"] == "summary" and kept[-1]["counts"] == oneshot["counts"]
    assert "--shape oneshot" in (raw / "nginx-default.oneshot-r1.probe.cmd").read_text()
    traces = [r for r in rows if r["kind"] == "trace"]
    if os.geteuid() != 0:
        assert traces == []
        return
    assert len(traces) == 1, traces
    (t,) = traces
    assert t["shapes"] == ["burst", "ramp", "keepalive", "oneshot"]
    assert sum(t["probe_counts"].values()) == 176
    won = {str(w["pid"]): w["won"] for w in t["trace"]["workers"] if w["won"]}
    assert won == {k: v for k, v in t["probe_counts"].items() if v} and t["won_equals_probe"] is True


def test_anchor_nginx_keeps_no_access_log():
    """The cost anchor's nginx (access_log off, as our server keeps no log)
    answers with its worker's pid and writes no access log; the worker count
    is the caller's."""
    need("nginx")
    with peers.Peer("nginx-default", workers=2, access_log=False) as peer:
        conf = open(os.path.join(peer.dir, "nginx.conf")).read()
        assert "access_log off;" in conf and "worker_processes 2;" in conf
        assert peer.access_log is None
        _, summary = probe(peer, "burst", "--connections", "8", "--rounds", "1")
        assert summary["answered"] == 8 and set(summary["counts"]) == worker_ids(peer)
        assert not os.path.exists(os.path.join(peer.dir, "access.log"))
