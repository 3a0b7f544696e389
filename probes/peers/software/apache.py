"""Apache httpd 2.4, event MPM: child processes under a parent, each with
ThreadsPerChild worker threads and one listener thread that accepts. The
children share one listening socket, or with ListenCoresBucketsRatio one
SO_REUSEPORT socket per bucket (online CPUs / ratio buckets, child slot i
in bucket i % buckets). The child counts are pinned so that there are
`workers` children for the whole run. The access log (%P per request) is
the truth."""

import os

from probes.peers.software.base import (Software, children, connections_by_pid, log_lines, version_line, write_config, write_docroot)

MODULES = "/usr/lib/apache2/modules/"
THREADS = 25  # ThreadsPerChild, its default


def conf(setting, d, port, workers, access_log=True):
    """The children: StartServers = ServerLimit = workers; MaxSpareThreads
    at every thread so that no child is stopped for being idle."""
    total = workers * THREADS
    buckets = "ListenCoresBucketsRatio 1\n" if setting == "buckets" else ""
    log = f'CustomLog {d}/access.log peer\n' if access_log else ""
    user = "User www-data\nGroup www-data\n" if os.geteuid() == 0 else ""
    return f"""LoadModule mpm_event_module {MODULES}mod_mpm_event.so
LoadModule authz_core_module {MODULES}mod_authz_core.so
LoadModule dir_module {MODULES}mod_dir.so
ServerName acceptlab
ServerRoot {d}
DefaultRuntimeDir {d}
PidFile {d}/apache2.pid
ErrorLog {d}/error.log
LogLevel notice
{user}Listen 127.0.0.1:{port}
{buckets}StartServers {workers}
ServerLimit {workers}
ThreadsPerChild {THREADS}
ThreadLimit {THREADS}
MaxRequestWorkers {total}
MinSpareThreads 1
MaxSpareThreads {total}
MaxConnectionsPerChild 0
KeepAlive On
KeepAliveTimeout 30
MaxKeepAliveRequests 0
LogFormat "%P %{{remote}}p %k %U" peer
{log}DocumentRoot {d}/www
DirectoryIndex index.html
<Directory {d}/www>
    Require all granted
</Directory>
"""


class Apache(Software):
    name = "apache"
    binary = "apache2"
    packages = ("apache2",)
    truth = "Apache access log %P"
    configs = {"apache-event": "default", "apache-event-buckets": "buckets"}
    settings = {"default": "mpm_event, StartServers = ServerLimit = workers",
                "buckets": "mpm_event, the same and ListenCoresBucketsRatio 1"}
    files = ("httpd.conf",)

    def version(self):
        return version_line([self.path(), "-v"], r"Apache/(\S+)", "apache2/")

    def write(self, setting, d, port, workers, access_log=True):
        write_docroot(d)
        return write_config(d, "httpd.conf", conf(setting, d, port, workers, access_log))

    def command(self, setting, d, port, workers, access_log=True):
        return [self.path(), "-f", self.write(setting, d, port, workers, access_log), "-DFOREGROUND"], {}

    def check_command(self, setting, d, port, workers):
        return [self.path(), "-t", "-f", self.write(setting, d, port, workers)]

    def workers(self, proc, d, workers):
        """The parent's children (it forks no others: no CGI daemon)."""
        kids = children(proc.pid)
        return [(k, k) for k in kids] if len(kids) == workers else None

    def log_connections(self, d, start):
        """Distinct connections per %P (format 'peer': %P %{remote}p %k %U):
        a line whose %k is 0 is its connection's first request; later ones
        on the same pid and client port belong to it."""
        pairs, seen = [], {}
        for parts in log_lines(d, self.log, start, 3):
            key = (parts[0], parts[1])
            if parts[2] == "0" or key not in seen:
                seen[key] = seen.get(key, 0) + 1
            pairs.append((parts[0], (parts[1], seen[key])))
        return connections_by_pid(pairs)
