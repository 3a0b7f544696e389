"""The census (probes/studies/census.py, report/sections/census.py) and the
server softwares it starts (probes/peers/software/): every software module
implements the interface and is installed by `make deps`; a step on a
server that keeps a pid log (nginx with reuseport) diagnoses each shape's
rounds, sets its log and sock_diag's owners beside them, and leaves nothing
running; php-fpm, which speaks FastCGI, is loaded with --tcp and checked
with FastCGI requests; a missing software is an "unavailable" row and one
that does not start an "error" row with its log's last lines; the section
renders the table and refuses rows whose flags disagree with their counts."""

import json
import os
import re
import time

import pytest

from probes.harness.lifecycle import StepFailed
from probes.peers import peers
from probes.peers.software import SOFTWARE, base
from probes.plan import Plan
from probes.studies import census
from report.sections import census as section
from tests.conftest import ROOT

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="the diagnosis traces with BPF: needs root")


def deps_packages():
    text = open(os.path.join(ROOT, "ci", "deps.sh")).read()
    block = re.search(r'PACKAGES="([^"]*)"', text).group(1)
    return set(block.replace("\\\n", " ").split())


def test_every_software_implements_the_interface():
    """Each module: its packages in make deps' list, its settings in its
    own words for every configuration, a mode, and a truth named exactly
    when it reads a pid log; configuration names unique across softwares."""
    names = []
    for key, sw in SOFTWARE.items():
        assert isinstance(sw, base.Software) and sw.name == key and sw.binary
        assert sw.packages and set(sw.packages) <= deps_packages(), (key, sw.packages)
        assert sw.mode in ("process", "threads"), key
        assert sw.configs and all(v in sw.settings for v in sw.configs.values()), (key, sw.configs)
        assert sw.keeps_pid_log() == (sw.truth is not None and sw.truth not in ("HAProxy thread", "/pid answers")), key
        names += list(sw.configs)
    assert len(names) == len(set(names))
    # The census: at least twelve softwares, today's peers among them.
    assert {"nginx", "haproxy", "node"} <= set(SOFTWARE) and len(SOFTWARE) >= 12, sorted(SOFTWARE)


def step_rows(tmp_path, name, workers=2):
    raw = tmp_path / "raw"
    raw.mkdir(exist_ok=True)
    try:
        rows, text = census.server_step(Plan(studies=("census",)), str(raw), name, workers)
    except StepFailed as e:
        raise AssertionError("the step failed: %s (rows %r)" % (e, getattr(e, "rows", None)))
    return rows, text


def no_server_left(binary):
    """No process of binary runs any more (the step stopped its group)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            exe = os.readlink("/proc/%s/exe" % pid)
        except OSError:
            continue
        if os.path.basename(exe) == binary and os.path.exists("/proc/%s" % pid):
            with open("/proc/%s/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    return False
    return True


@root_only
def test_a_server_with_a_pid_log(tmp_path):
    """nginx with `listen ... reuseport` at 2 workers: each shape is a
    reuseport group of 2 sockets, 3 rounds of 32 connections each split by
    the kernel, and the access log's connections per $pid equal the
    diagnosis's served counts in every shape (no held burst: the log is the
    record). Nothing of nginx is left running."""
    if not peers.availability("nginx-reuseport")[0]:
        pytest.skip(peers.availability("nginx-reuseport")[1])
    rows, text = step_rows(tmp_path, "nginx-reuseport")
    shapes = [r for r in rows if r["kind"] == "shape"]
    assert [r["shape"] for r in shapes] == list(census.SHAPES), rows
    for r in shapes:
        assert (r["listener"], r["listeners"], r["selector"], r["closest_variant"]) == \
            ("reuseport", 2, "hash", "reuseport"), r
        assert len(r["rounds"]) == 3 and all(x["connections"] == 32 for x in r["rounds"]), r["rounds"]
        assert r["crosscheck"]["equal"], r["crosscheck"]
        assert sum(r["crosscheck"]["truth"].values()) == 96, r["crosscheck"]
    assert not [r for r in rows if r["kind"] == "held"], rows
    time.sleep(0.2)
    assert no_server_left("nginx"), "an nginx process outlived the step"


@root_only
def test_a_server_without_a_pid_log_is_checked_by_socket_ownership(tmp_path):
    """lighttpd (max-worker 2) logs no worker pid: one burst held open once
    answered, and sock_diag's owner of each held connection equals the
    passive diagnosis's served counts per worker process."""
    if not peers.availability("lighttpd-workers")[0]:
        pytest.skip(peers.availability("lighttpd-workers")[1])
    rows, _ = step_rows(tmp_path, "lighttpd-workers")
    assert [r["shape"] for r in rows if r["kind"] == "shape"] == list(census.SHAPES)
    assert all("crosscheck" not in r for r in rows if r["kind"] == "shape")
    (held,) = [r for r in rows if r["kind"] == "held"]
    assert held["held_open"] == 32 and held["crosscheck"]["source"].startswith("sock_diag"), held
    assert held["crosscheck"]["equal"] and sum(held["crosscheck"]["truth"].values()) == 32, held
    assert no_server_left("lighttpd")


@root_only
def test_fastcgi_is_loaded_with_tcp_and_checked_with_fastcgi(tmp_path):
    """php-fpm (pm = static, 2 children): burst and ramp are --tcp loads
    (nothing sent, so the split is of accepts), keepalive is not
    applicable, and 32 FastCGI requests' log lines (%p) equal the passive
    diagnosis's served counts per child."""
    if not peers.availability("php-fpm-static")[0]:
        pytest.skip(peers.availability("php-fpm-static")[1])
    rows, _ = step_rows(tmp_path, "php-fpm-static")
    shapes = {r["shape"]: r for r in rows if r["kind"] == "shape"}
    assert "not_applicable" in shapes["keepalive"]
    for shape in ("burst", "ramp"):
        assert shapes[shape]["split_of"] == "accepted" and len(shapes[shape]["rounds"]) == 3, shapes[shape]
    (held,) = [r for r in rows if r["kind"] == "held"]
    assert held["crosscheck"]["equal"] and sum(held["crosscheck"]["truth"].values()) == 32, held
    assert no_server_left("php-fpm8.2")


def test_missing_software_is_an_unavailable_row(monkeypatch, tmp_path):
    monkeypatch.setattr(base, "which", lambda prog: None)
    rows, text = step_rows(tmp_path, "apache-event")
    assert rows[0]["kind"] == "unavailable" and "not installed" in rows[0]["reason"], rows
    assert "make deps" in rows[0]["reason"]


@root_only
def test_a_server_that_does_not_start_is_an_error_row_with_its_log(monkeypatch, tmp_path):
    """A server whose command exits at once: an "error" row whose message
    holds the last lines it wrote."""
    sw = SOFTWARE["lighttpd"]
    monkeypatch.setattr(type(sw), "check_command", lambda self, *a: None)
    monkeypatch.setattr(type(sw), "command", lambda self, setting, d, port, workers, access_log=True: (
        ["sh", "-c", "echo first line >&2; echo census-test: bad directive on line 3 >&2; exit 3"], {}))
    raw = tmp_path / "raw"
    raw.mkdir()
    with pytest.raises(StepFailed) as e:
        census.server_step(Plan(studies=("census",)), str(raw), "lighttpd-workers", 2)
    (row,) = e.value.rows
    assert row["kind"] == "error" and "bad directive on line 3" in row["error"], row


def shape(server="s", workers=2, shape_name="burst", rounds=(("17/15", True),), crosscheck=None, **kw):
    row = {"kind": "shape", "server": server, "software": "x", "version": "x/1", "setting": "default",
           "workers": workers, "shape": shape_name, "listener": "shared", "listeners": 1, "wait": "epoll",
           "selector": None, "handoff": False, "closest_variant": "lt", "traced": True,
           "rounds": [{"round": i + 1, "split": s, "within_2to1": w, "connections": 32}
                      for i, (s, w) in enumerate(rounds)],
           "within": sum(w for _, w in rounds)}
    if crosscheck:
        row["crosscheck"] = crosscheck
    row.update(kw)
    return row


def render(tmp_path, rows):
    path = tmp_path / "census.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return "\n".join(section.render_census(None_meta(), section.read_census(path), {}))


def None_meta():
    class M:
        census = None
    return M()


def test_section_table_and_cross_check(tmp_path):
    log = {"source": "x log %P", "truth": {"1": 17, "2": 15}, "diagnosed": {"1": 17, "2": 15}, "equal": True}
    bad = {"source": "x log %P", "truth": {"1": 16, "2": 16}, "diagnosed": {"1": 17, "2": 15}, "equal": False}
    text = render(tmp_path, [
        shape(crosscheck=log),
        shape(shape_name="ramp", rounds=(("32/0", False),), crosscheck=bad),
        {"kind": "shape", "server": "s", "workers": 2, "shape": "keepalive", "not_applicable": "no"},
        {"kind": "unavailable", "server": "t", "workers": 2, "reason": "t is not installed"},
    ])
    assert "| s | x/1 | default | 2 | shared, epoll | lt | 17/15 | 32/0 | n/a | 1 of 2 |" in text, text
    assert "x log %P: 1 of 2 shapes equal" in text
    assert "- s, 2 workers, ramp: the diagnosis 1:17 2:15, x log %P 1:16 2:16." in text
    assert "- t, 2 workers: unavailable: t is not installed" in text


@pytest.mark.parametrize("row,why", [
    (shape(within=0), '"within" disagrees'),
    (shape(crosscheck={"source": "l", "truth": {"1": 2}, "diagnosed": {"1": 3}, "equal": True}),
     '"crosscheck.equal" disagrees'),
    (dict(shape(), kind="sideways"), '"kind" must be'),
])
def test_section_refuses_rows_that_contradict_themselves(tmp_path, row, why):
    from acceptlab.results_io import InputError
    path = tmp_path / "census.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(InputError) as e:
        section.read_census(path)
    assert why in str(e.value), str(e.value)


def test_a_setting_is_called_better_only_beyond_chance(tmp_path):
    """Two settings of one software: 9 of 9 against 2 of 9 rounds within 2:1
    is beyond chance (Fisher's exact, two-sided: of 11 rounds within over
    both, all 9 of one setting's, 2 x C(11,9) x C(7,0) / C(18,9) = 0.226 %,
    below 1 %) and said so; 5 of 9 against 4 of 9 is
    not resolved, and the text says so rather than naming a winner."""
    assert abs(section.fisher_two_sided(9, 9, 2, 9) - 2 * 55 / 48620) < 1e-12
    rows = []
    for server, within in (("x-good", 9), ("x-default", 2), ("y-a", 5), ("y-b", 4)):
        rounds = tuple(("16/16", True) for _ in range(within)) + tuple(("32/0", False) for _ in range(9 - within))
        rows.append(shape(server=server, rounds=rounds, setting=server + " setting", software=server[0]))
    text = render(tmp_path, rows)
    assert ("x-good setting kept more rounds within 2:1 than x-default setting (9 of 9 against 2 of 9; "
            "as far apart by chance between settings that balance alike: 0.226 %)") in text, text
    assert ("y-a setting and y-b setting: 5 of 9 against 4 of 9 rounds within 2:1, not resolved at this run's "
            "rounds") in text, text
    assert "y-a setting kept more" not in text
