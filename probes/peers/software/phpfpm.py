"""PHP-FPM: a master process and, with pm = static, pm.max_children child
processes it forks, all inheriting the one listening socket of the pool;
each child blocks in accept() and serves one FastCGI request at a time. It
speaks FastCGI, not HTTP: readiness and load are FastCGI requests through
cgi-fcgi (libfcgi-bin). Its access log, the child's pid (%p) per request,
is the truth; it has no connection id, but cgi-fcgi asks for no kept
connection (FCGI_KEEP_CONN), so one request is one connection."""

import os
import subprocess

from probes.peers.software.base import (Software, children, connections_by_pid, log_lines, version_line, which,
                                        write_config)

SCRIPT = "index.php"
PHP = "<?php echo \"ok\\n\";\n"


def conf(d, port, workers, access_log=True):
    log = f'access.log = {d}/access.log\naccess.format = "%p %r %s"\n' if access_log else ""
    return f"""[global]
pid = {d}/php-fpm.pid
error_log = {d}/error.log
daemonize = no

[peer]
user = www-data
group = www-data
listen = 127.0.0.1:{port}
pm = static
pm.max_children = {workers}
{log}"""


class PhpFpm(Software):
    name = "php-fpm"
    binary = "php-fpm8.2"
    packages = ("php8.2-fpm", "libfcgi-bin")
    http = False
    truth = "php-fpm access log %p"
    configs = {"php-fpm-static": "static"}
    settings = {"static": "pm = static, pm.max_children = N"}
    files = ("php-fpm.conf", SCRIPT)

    def __init__(self):
        self.dirs = {}  # port -> its dir, for ready()

    def version(self):
        return version_line([self.path(), "-v"], r"PHP (\S+)", "php-fpm/")

    def write(self, d, port, workers, access_log=True):
        os.chmod(d, 0o755)  # the children (www-data) read the script
        write_config(d, SCRIPT, PHP)
        self.dirs[port] = d
        return write_config(d, "php-fpm.conf", conf(d, port, workers, access_log))

    def command(self, setting, d, port, workers, access_log=True):
        return [self.path(), "-F", "-R", "-y", self.write(d, port, workers, access_log)], {}

    def check_command(self, setting, d, port, workers):
        return [self.path(), "-t", "-R", "-y", self.write(d, port, workers)]

    def workers(self, proc, d, workers):
        """The master's children (the process started is the master)."""
        kids = children(proc.pid)
        return [(k, k) for k in kids] if len(kids) == workers else None

    def fastcgi_request(self, d, port, uri="/"):
        """One FastCGI GET of the script (cgi-fcgi, one connection); True
        when it answered the script's output."""
        env = {"SCRIPT_FILENAME": os.path.join(d, SCRIPT), "SCRIPT_NAME": "/" + SCRIPT,
               "REQUEST_METHOD": "GET", "REQUEST_URI": uri, "QUERY_STRING": "",
               "SERVER_PROTOCOL": "HTTP/1.1", "GATEWAY_INTERFACE": "CGI/1.1"}
        try:
            out = subprocess.run([which("cgi-fcgi"), "-bind", "-connect", "127.0.0.1:%d" % port],
                                 env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=5)
        except (OSError, subprocess.SubprocessError, TypeError):
            return False
        return out.returncode == 0 and out.stdout.endswith(b"\r\n\r\nok\n")

    def ready(self, port):
        d = self.dirs.get(port)
        return d is not None and self.fastcgi_request(d, port, "/peer-ready")

    def log_connections(self, d, start):
        """Requests per %p (one per connection), /peer-ready left out."""
        return connections_by_pid((p[0], i) for i, p in enumerate(log_lines(d, self.log, start, 1)))
