"""A function run in a network namespace of its own (probes/harness/netns.py),
as the cost, trace_overhead, respawn and reload studies run their trials:
the result comes back from a forked child that had a namespace with only
lo, up; a failure comes back as the step's failure; a sysctl set there stays
there; and whatever the child started is gone once run_in_netns returns,
whether the function finished, failed or overran its time."""

import os
import socket
import subprocess
import time

import pytest

from probes.harness import lifecycle
from probes.harness.lifecycle import StepFailed
from probes.harness.netns import in_namespace, netns_of, run_in_netns
from tests.conftest import alive

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a network namespace of its own)")



def what_the_child_sees():
    with open("/proc/net/dev") as f:
        names = [l.split(":")[0].strip() for l in f.readlines()[2:]]
    with socket.socket() as srv:  # loopback works: a connection to itself
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        with socket.create_connection(srv.getsockname(), timeout=5):
            pass
    return {"netns": netns_of(), "interfaces": names, "pid": os.getpid()}


@needs_root
def test_the_result_comes_back_from_a_namespace_with_only_lo_up():
    got = run_in_netns(what_the_child_sees, 30)
    assert got["interfaces"] == ["lo"], got
    assert got["netns"] and got["netns"] != netns_of()
    assert got["pid"] != os.getpid() and not alive(got["pid"])
    assert lifecycle._running == [], "the child is still in the clean-up registry"


@needs_root
def test_a_step_failed_in_the_child_is_the_steps_failure_with_its_rows():
    def fails():
        raise StepFailed("no server", [{"arm": "bare", "error": "no server"}])
    with pytest.raises(StepFailed) as e:
        run_in_netns(fails, 30)
    assert str(e.value) == "no server" and e.value.rows == [{"arm": "bare", "error": "no server"}]

    def breaks():
        raise KeyError("ready")
    with pytest.raises(StepFailed, match="KeyError"):
        run_in_netns(breaks, 30)


@needs_root
def test_a_sysctl_set_in_the_namespace_stays_there():
    name = "net.ipv4.tcp_tw_reuse"
    path = "/proc/sys/" + name.replace(".", "/")
    with open(path) as f:
        outside = f.read().strip()
    inside = "1" if outside != "1" else "0"

    def read():
        with open(path) as f:
            return f.read().strip()
    assert run_in_netns(read, 30, sysctls={name: inside}) == inside
    with open(path) as f:
        assert f.read().strip() == outside


def start_lingerer(pid_file):
    """A process in a session of its own (as the harness starts a server),
    not registered anywhere: only the namespace sweep can find it."""
    p = subprocess.Popen(["sleep", "300"], start_new_session=True)
    with open(pid_file, "w") as f:
        f.write(str(p.pid))
    return p.pid


@needs_root
def test_what_the_child_left_running_is_killed(tmp_path):
    pid = run_in_netns(lambda: start_lingerer(tmp_path / "pid"), 30)
    assert not alive(pid), "a process the child started outlived it"


@needs_root
def test_a_child_that_overruns_is_killed_with_what_it_started(tmp_path):
    def hangs():
        start_lingerer(tmp_path / "pid")
        with open(tmp_path / "ns", "w") as f:
            f.write(netns_of())
        time.sleep(300)
    t0 = time.monotonic()
    with pytest.raises(StepFailed, match="did not finish within 2 s"):
        run_in_netns(hangs, 2)
    assert time.monotonic() - t0 < 30
    pid = int((tmp_path / "pid").read_text())
    assert not alive(pid), "a process the child started outlived the timeout"
    assert in_namespace((tmp_path / "ns").read_text()) == []
    assert lifecycle._running == []
