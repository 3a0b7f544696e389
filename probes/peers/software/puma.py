"""Puma in cluster mode: a master that binds the listener and forks
workers (-w), each a process with one request thread (-t 1:1), a reactor
thread that buffers requests, and a server thread that waits on the
shared listener (IO.select) and accepts, only while the request thread is
not busy. Answers "ok". Its record of who served is the Rack app's: each
request appends the worker's pid ($$) and the connection's client port to
access.log (rack_log_connections)."""

import os
import re

from probes.peers.software.base import Software, children, connections_by_pid, log_lines, read_from, version_line

# The Rack app: 200 "ok" to every request, after one line in LOG: the
# worker's pid, the client's port (Puma's socket; "-" where the server
# gives none: Unicorn closes each connection after one request) and the path.
CONFIG_RU = """LOG = %r
run ->(env) {
  sock = env["puma.socket"]
  # The client port and the socket's object id (never reused): a port
  # alone may come back on a later connection.
  port = sock ? "#{sock.remote_address.ip_port}.#{sock.object_id}" : (env["REMOTE_PORT"] || "-")
  File.open(LOG, "a") { |f| f.write("#{$$} #{port} #{env["PATH_INFO"]}\\n") }
  [200, {"Content-Type" => "text/plain", "Content-Length" => "2"}, ["ok"]]
}
"""


def write_app(d):
    path = os.path.join(d, "config.ru")
    with open(path, "w") as f:
        f.write(CONFIG_RU % os.path.join(d, "access.log"))
    return path


def rack_log_connections(d, start):
    """{pid: connections} from the app's log: distinct (pid, client port),
    each line its own connection where the port is "-"."""
    return connections_by_pid((p[0], p[1] if p[1] != "-" else "line %d" % i)
                              for i, p in enumerate(log_lines(d, "access.log", start, 2)))


class Puma(Software):
    name = "puma"
    binary = "puma"
    packages = ("puma",)
    truth = "Rack app log of the worker's pid"
    configs = {"puma-cluster": "default"}
    settings = {"default": "-w workers (cluster mode), its default threads"}
    files = ("config.ru",)

    def version(self):
        return version_line([self.path(), "--version"], r"version (\S+)", "puma/")

    def command(self, setting, d, port, workers, access_log=True):
        app = write_app(d)
        return [self.path(), "-e", "production", "-w", str(workers),
                "-b", "tcp://127.0.0.1:%d" % port, "--pidfile", os.path.join(d, "puma.pid"), app], {}

    def workers(self, proc, d, workers):
        """The master's children its log says booted ("- Worker K (PID: P)
        booted"), once all of them have."""
        log = read_from(os.path.join(d, "stdout.log"), 0)
        booted = {int(p) for p in re.findall(r"Worker \d+ \(PID: (\d+)\) booted", log)}
        pids = [p for p in children(proc.pid) if p in booted]
        return [(p, p) for p in pids] if len(pids) == workers else None

    def log_connections(self, d, start):
        return rack_log_connections(d, start)
