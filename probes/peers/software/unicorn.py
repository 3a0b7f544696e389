"""unicorn: a master that binds the listener and forks worker processes
(worker_processes), each single-threaded: it waits on the shared
listener (IO.select), accepts one connection, serves it and closes it (no
keep-alive). The listener has TCP_DEFER_ACCEPT (listen's default
tcp_defer_accept): a connection stays in SYN-RECV until its request
arrives. Answers "ok"; the Rack app (puma.py's) logs the worker's pid
with every request, its record of who served."""

import os
import re

from probes.peers.software.base import Software, children, read_from, version_line
from probes.peers.software.puma import rack_log_connections, write_app


def conf(d, port, workers):
    return f"""worker_processes {workers}
listen "127.0.0.1:{port}"
working_directory "{d}"
pid "{d}/unicorn.pid"
stderr_path "{d}/error.log"
"""


class Unicorn(Software):
    name = "unicorn"
    binary = "unicorn"
    packages = ("unicorn",)
    truth = "Rack app log of the worker's pid"
    configs = {"unicorn-default": "default"}
    settings = {"default": "worker_processes workers, the rest its defaults"}
    files = ("unicorn.conf.rb", "config.ru")

    def version(self):
        return version_line([self.path(), "-v"], r"unicorn v(\S+)", "unicorn/")

    def command(self, setting, d, port, workers, access_log=True):
        app = write_app(d)
        path = os.path.join(d, "unicorn.conf.rb")
        with open(path, "w") as f:
            f.write(conf(d, port, workers))
        return [self.path(), "-E", "production", "-c", path, app], {}

    def workers(self, proc, d, workers):
        """The master's children its log says are ready ("#P] INFO -- :
        worker=K ready"), once all of them are."""
        log = read_from(os.path.join(d, "error.log"), 0)
        ready = {int(p) for p in re.findall(r"#(\d+)\]\s+INFO -- : worker=\d+ ready", log)}
        pids = [p for p in children(proc.pid) if p in ready]
        return [(p, p) for p in pids] if len(pids) == workers else None

    def log_connections(self, d, start):
        return rack_log_connections(d, start)
