"""HAProxy: threads of one process (nbthread); every answer is the thread's
number (%[thread]), which is no kernel tid."""

import os

from probes.peers.software.base import Software, threads, version_line


def conf(setting, port, workers):
    return f"""global
    nbthread {workers}
    tune.listener.multi-queue {setting}
defaults
    mode http
    timeout client 30s
    timeout connect 5s
    timeout server 30s
    timeout http-keep-alive 30s
frontend fe
    bind 127.0.0.1:{port}
    http-request return status 200 content-type text/plain lf-string "%[thread]\\n"
"""


class Haproxy(Software):
    name = "haproxy"
    binary = "haproxy"
    packages = ("haproxy",)
    mode = "threads"
    answers_pid = True  # its thread number
    truth = "HAProxy thread"
    configs = {"haproxy-mq-on": "on", "haproxy-mq-fair": "fair", "haproxy-mq-off": "off"}
    settings = {"on": "tune.listener.multi-queue on", "fair": "tune.listener.multi-queue fair",
                "off": "tune.listener.multi-queue off"}
    files = ("haproxy.cfg",)

    def version(self):
        return version_line([self.path(), "-v"], r"version (\S+)", "haproxy/")

    def command(self, setting, d, port, workers, access_log=True):
        path = os.path.join(d, "haproxy.cfg")
        with open(path, "w") as f:
            f.write(conf(setting, port, workers))
        return [self.path(), "-db", "-f", path], {}

    def check_command(self, setting, d, port, workers):
        path = os.path.join(d, "haproxy.cfg")
        with open(path, "w") as f:
            f.write(conf(setting, port, workers))
        return [self.path(), "-c", "-f", path]

    def workers(self, proc, d, workers):
        """%[thread] answers the thread's number, 0 .. nbthread-1."""
        return [(proc.pid, t) for t in range(workers)] if len(threads(proc.pid)) >= workers else None
