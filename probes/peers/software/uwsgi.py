"""uWSGI: a master process and --processes worker processes it forks, all
sharing the one --http-socket the master bound; each worker waits for it in
an epoll of its own (level-triggered) and serves one request per connection
(a plain --http-socket does not keep connections alive). --thunder-lock
puts one lock (a robust pthread mutex) before that wait: its holder alone
waits in epoll_wait, the others wait for the lock. Its request log, the
worker's %(pid) per request, is the truth."""

import os

from probes.peers.software.base import Software, children, connections_by_pid, log_lines, version_line

# --http-socket sets no REMOTE_PORT: the app logs its connection's client
# port (uwsgi.connection_fd()) as %(port), which tells the connections apart.
APP = '''import socket
import uwsgi


def application(environ, start_response):
    s = socket.fromfd(uwsgi.connection_fd(), socket.AF_INET, socket.SOCK_STREAM)
    uwsgi.set_logvar("port", str(s.getpeername()[1]))
    s.close()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "3")])
    return [b"ok\\n"]
'''
LOG_FORMAT = "%(pid) %(port) %(uri)"
# a line per worker that has entered its accept loop (--hook-accepting)
ACCEPTING = "accepting"


class Uwsgi(Software):
    name = "uwsgi"
    binary = "uwsgi"
    packages = ("uwsgi", "uwsgi-plugin-python3")  # logfile_plugin is in uwsgi-core
    truth = "uWSGI request log %(pid)"
    documented = {"thunder_lock": "--thunder-lock: serialize accept() usage (if possible) (uwsgi --help)"}
    configs = {"uwsgi-default": "default", "uwsgi-thunder-lock": "thunder_lock"}
    settings = {"default": "--master --processes N", "thunder_lock": "--thunder-lock"}
    files = ("app.py",)

    def version(self):
        return version_line([self.path(), "--version"], r"(\S+)", "uwsgi/")

    def command(self, setting, d, port, workers, access_log=True):
        with open(os.path.join(d, "app.py"), "w") as f:
            f.write(APP)
        # no --daemonize: it stays in the foreground; its own log to d/uwsgi.log
        argv = [self.path(), "--plugin", "python3,logfile", "--http-socket", "127.0.0.1:%d" % port,
                "--master", "--processes", str(workers), "--wsgi-file", os.path.join(d, "app.py"),
                "--need-app", "--die-on-term", "--logto", os.path.join(d, "uwsgi.log"),
                "--hook-accepting", "appendn:%s accepting" % os.path.join(d, ACCEPTING)]
        if access_log:
            argv += ["--req-logger", "file:" + os.path.join(d, self.log), "--logformat", LOG_FORMAT]
        else:
            argv.append("--disable-logging")
        if setting == "thunder_lock":
            argv.append("--thunder-lock")
        return argv, {}

    def workers(self, proc, d, workers):
        """The master's children (the process started is the master), once
        every one has entered its accept loop: until then a worker holds
        only the epoll it inherited from the master, without the socket."""
        kids = children(proc.pid)
        try:
            with open(os.path.join(d, ACCEPTING)) as f:
                accepting = len(f.read().split())
        except OSError:
            accepting = 0
        return [(k, k) for k in kids] if len(kids) == workers and accepting >= workers else None

    def log_connections(self, d, start):
        """Lines per pid, /peer-ready left out: --http-socket closes each
        connection after one request, so a line is a connection (a client
        port is no key: a later connection may reuse it)."""
        return connections_by_pid((p[0], i) for i, p in enumerate(log_lines(d, self.log, start, 2)))
