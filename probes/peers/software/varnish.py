"""Varnish: a manager process and its child, the cache process, whose
worker threads (all named "cache-worker") are split into thread_pools
pools. In each pool one of them runs the pool's accept task, blocked in
accept() on the shared listener, and hands each connection it takes to an
idle thread of its pool; these acceptors are the workers here. (The
thread named "cache-acceptor" only sets the listeners up and then
sleeps.) The VCL has no backend and answers every request itself (synth
200 "ok"); no record of who served."""

import os

from probes.peers.software.base import Software, children, comm, threads, version_line

VCL = """vcl 4.1;
backend default none;
sub vcl_recv { return (synth(200, "OK")); }
sub vcl_synth {
    set resp.http.Content-Type = "text/plain";
    set resp.body = "ok";
    return (deliver);
}
"""


def in_accept(pid):
    """pid's threads blocked in accept() (their wchan)."""
    out = []
    for t in threads(pid):
        try:
            with open("/proc/%d/task/%d/wchan" % (pid, t)) as f:
                if f.read().strip() == "inet_csk_accept":
                    out.append(t)
        except OSError:
            pass
    return out


class Varnish(Software):
    name = "varnish"
    binary = "varnishd"
    packages = ("varnish",)
    mode = "threads"
    configs = {"varnish-pools": "default"}
    settings = {"default": "thread_pools=workers (one acceptor each), the rest its defaults"}
    files = ("default.vcl",)
    start_timeout = 20.0  # the manager compiles the VCL with cc first

    def version(self):
        return version_line([self.path(), "-V"], r"varnish-(\S+)", "varnish/")

    def _write(self, d):
        path = os.path.join(d, "default.vcl")
        with open(path, "w") as f:
            f.write(VCL)
        return path

    def command(self, setting, d, port, workers, access_log=True):
        """-F: the manager stays in the foreground (as root it runs the
        child as the varnish users); -T none: no management port. The pools
        keep their default sizes (100 to 5000 threads each): with few
        threads an acceptor that finds no idle worker serves the connection
        itself and another thread takes over accept(), so the acceptors
        would not stay put."""
        return [self.path(), "-F", "-n", os.path.join(d, "varnish"), "-a", "127.0.0.1:%d" % port,
                "-f", self._write(d), "-s", "malloc,16m", "-T", "none",
                "-p", "thread_pools=%d" % workers], {}

    def check_command(self, setting, d, port, workers):
        return [self.path(), "-C", "-n", os.path.join(d, "varnish"), "-f", self._write(d)]

    def workers(self, proc, d, workers):
        """The child's threads blocked in accept(), once there is one per
        pool."""
        for pid in children(proc.pid):
            if comm(pid) == "cache-main":
                acc = in_accept(pid)
                return [(pid, t) for t in acc] if len(acc) == workers else None
        return None
