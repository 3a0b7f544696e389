"""Caddy: one Go process. Go's runtime waits on the listener in its one
epoll (edge-triggered, the netpoller); whichever thread runs the
accepting goroutine calls accept(), and each connection's goroutine may
run on another. Goroutines run on up to GOMAXPROCS threads at once (its
"workers" here), and no thread is tied to the listener. Answers "ok",
keeps no record of who served."""

import os

from probes.peers.software.base import Software, threads, version_line


def conf(d, port):
    """admin off: no admin listener on :2019; storage in d (nothing under
    $HOME)."""
    return f"""{{
    admin off
    auto_https off
    storage file_system {d}/data
}}
http://127.0.0.1:{port} {{
    bind 127.0.0.1
    respond "ok" 200
}}
"""


class Caddy(Software):
    name = "caddy"
    binary = "caddy"
    packages = ("caddy",)
    mode = "threads"
    configs = {"caddy-default": "default"}
    settings = {"default": "the Caddyfile's defaults, GOMAXPROCS=workers"}
    files = ("Caddyfile",)

    def version(self):
        return version_line([self.path(), "version"], r"v?(\d+\.\d+\.\d+)", "caddy/")

    def _write(self, d, port):
        path = os.path.join(d, "Caddyfile")
        with open(path, "w") as f:
            f.write(conf(d, port))
        return path

    def command(self, setting, d, port, workers, access_log=True):
        path = self._write(d, port)
        env = {"GOMAXPROCS": str(workers), "HOME": d, "XDG_DATA_HOME": d, "XDG_CONFIG_HOME": d}
        return [self.path(), "run", "--config", path, "--adapter", "caddyfile"], env

    def check_command(self, setting, d, port, workers):
        return [self.path(), "validate", "--config", self._write(d, port), "--adapter", "caddyfile"]

    def workers(self, proc, d, workers):
        """Every thread of the process (the runtime moves the accepting and
        serving goroutines among them), once there are GOMAXPROCS."""
        tids = threads(proc.pid)
        return [(proc.pid, t) for t in tids] if len(tids) >= workers else None
