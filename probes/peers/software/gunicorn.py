"""gunicorn: a Python WSGI server whose arbiter binds the listening socket
and forks --workers sync worker processes that inherit it; each worker
waits for it in select(), then accepts and serves one connection at a time
(the sync worker closes after every request, so one request is one
connection). Its access log, the worker's pid (%(p)s) per request, is the
truth. --reuse-port only sets SO_REUSEPORT on the arbiter's one socket,
which the workers still share."""

import os

from probes.peers.software.base import Software, children, connections_by_pid, log_lines, version_line

APP = '''def application(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "3")])
    return [b"ok\\n"]
'''
# post_worker_init runs in each worker after it has loaded the app, just
# before its accept loop: a line per worker that is up.
CONF = '''import os


def post_worker_init(worker):
    with open(%r, "a") as f:
        f.write("%%d\\n" %% os.getpid())
'''
UP = "up.pids"
# %(p)s is "<pid>"; the client's port tells the connections apart.
LOG_FORMAT = "%(p)s %({remote_port}e)s %(U)s"


class Gunicorn(Software):
    name = "gunicorn"
    binary = "gunicorn"
    packages = ("gunicorn",)
    truth = "gunicorn access log %(p)s"
    documented = {"reuse_port": "--reuse-port: Set the SO_REUSEPORT flag on the listening socket. "
                                "(gunicorn --help)"}
    configs = {"gunicorn-sync": "default", "gunicorn-reuse-port": "reuse_port"}
    settings = {"default": "--worker-class sync (the default)",
                "reuse_port": "--reuse-port (SO_REUSEPORT on the arbiter's socket)"}
    files = ("app.py", "gunicorn.conf.py")

    def version(self):
        return version_line([self.path(), "--version"], r"gunicorn \(version (\S+)\)", "gunicorn/")

    def command(self, setting, d, port, workers, access_log=True):
        with open(os.path.join(d, "app.py"), "w") as f:
            f.write(APP)
        with open(os.path.join(d, "gunicorn.conf.py"), "w") as f:
            f.write(CONF % os.path.join(d, UP))
        argv = [self.path(), "--bind", "127.0.0.1:%d" % port, "--workers", str(workers),
                "--worker-class", "sync", "--chdir", d, "--config", os.path.join(d, "gunicorn.conf.py")]
        if access_log:
            argv += ["--access-logfile", os.path.join(d, self.log), "--access-logformat", LOG_FORMAT]
        if setting == "reuse_port":
            argv.append("--reuse-port")
        return argv + ["app:application"], {}

    def workers(self, proc, d, workers):
        """The arbiter's children (the process started is the arbiter), once
        every one has loaded the app (its pid in up.pids)."""
        kids = children(proc.pid)
        try:
            with open(os.path.join(d, UP)) as f:
                up = {int(p) for p in f.read().split()}
        except OSError:
            up = set()
        return [(k, k) for k in kids] if len(kids) == workers and up >= set(kids) else None

    def log_connections(self, d, start):
        """Lines per pid, /peer-ready left out: a sync worker closes each
        connection after one request, so a line is a connection (a client
        port is no key: a later connection may reuse it)."""
        return connections_by_pid((p[0].strip("<>"), i) for i, p in enumerate(log_lines(d, self.log, start, 2)))
