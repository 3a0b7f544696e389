"""lighttpd with server.max-worker: the process started binds the port, then
forks max-worker worker processes and only watches them (restarts one that
dies); the workers share its listening socket, each with its own event
loop. It logs no worker pid: the census counts by socket ownership only."""

from probes.peers.software.base import Software, children, version_line, write_config, write_docroot


def conf(d, port, workers):
    return f"""server.document-root = "{d}/www"
server.bind = "127.0.0.1"
server.port = {port}
server.max-worker = {workers}
server.errorlog = "{d}/error.log"
index-file.names = ("index.html")
"""


class Lighttpd(Software):
    name = "lighttpd"
    binary = "lighttpd"
    packages = ("lighttpd",)
    configs = {"lighttpd-workers": "default"}
    settings = {"default": "server.max-worker = workers"}
    files = ("lighttpd.conf",)

    def version(self):
        return version_line([self.path(), "-v"], r"lighttpd/(\S+)", "lighttpd/")

    def write(self, d, port, workers):
        write_docroot(d)
        return write_config(d, "lighttpd.conf", conf(d, port, workers))

    def command(self, setting, d, port, workers, access_log=True):
        return [self.path(), "-D", "-f", self.write(d, port, workers)], {}

    def check_command(self, setting, d, port, workers):
        return [self.path(), "-tt", "-f", self.write(d, port, workers)]

    def workers(self, proc, d, workers):
        """The watcher's children."""
        kids = children(proc.pid)
        return [(k, k) for k in kids] if len(kids) == workers else None
