"""nginx: worker processes under a master; every answer is the worker's $pid,
and its access log ($pid per request) is the truth."""

import os

from probes.peers.software.base import Software, connections_by_pid, log_lines, version_line

PERL_MODULE = "/usr/lib/nginx/modules/ngx_http_perl_module.so"  # Debian's libnginx-mod-http-perl
# nginx-work's handler: spins us=N of the process's CPU clock (Time::HiRes),
# then answers its pid (body and X-Worker) with a Content-Length.
WORK_PERL = ("sub { my $r = shift; my ($us) = (($r->args // '') =~ /(?:^|&)us=([0-9]+)/); $us //= 0; "
             "my $c = Time::HiRes::CLOCK_PROCESS_CPUTIME_ID(); "
             "my $end = Time::HiRes::clock_gettime($c) + $us / 1e6; "
             "1 while Time::HiRes::clock_gettime($c) < $end; "
             "my $body = $$ . \"\\n\"; $r->header_out('X-Worker', $$); "
             "$r->header_out('Content-Length', length $body); $r->send_http_header('text/plain'); "
             "$r->print($body); return 0; }")


def conf(setting, d, port, workers, access_log=True):
    """access_log: one line per request with the worker's $pid (the ground
    truth the probe's counts are checked against); off for the cost anchor,
    since our server keeps no log either."""
    events = ["worker_connections 1024;"]
    events.append("accept_mutex %s;" % ("on" if setting == "accept_mutex" else "off"))
    if setting == "multi_accept":
        events.append("multi_accept on;")
    listen = "127.0.0.1:%d%s" % (port, " reuseport" if setting == "reuseport" else "")
    user = "user root;\n" if os.geteuid() == 0 else ""
    log = f"access_log {d}/access.log peer;" if access_log else "access_log off;"
    answer = 'return 200 "$pid\\n";'
    if setting == "work":
        user = f"load_module {PERL_MODULE};\n" + user
        answer = "perl '%s';" % WORK_PERL.replace("'", "\\'")
        log += "\n    perl_require Time/HiRes.pm;"
    return f"""{user}worker_processes {workers};
daemon off;
master_process on;
pid {d}/nginx.pid;
error_log {d}/error.log notice;
events {{ {' '.join(events)} }}
http {{
    log_format peer '$pid $connection $connection_requests $request_uri';
    {log}
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    keepalive_timeout 30s;
    keepalive_requests 100000;
    server {{
        listen {listen};
        default_type text/plain;
        location / {{ {answer} }}
    }}
}}
"""


class Nginx(Software):
    name = "nginx"
    binary = "nginx"
    packages = ("nginx", "libnginx-mod-http-perl")
    answers_pid = True
    truth = "nginx access log $pid"
    configs = {
        "nginx-default": "default",          # accept_mutex off: EPOLLEXCLUSIVE (+ reorder >= 1.21.6)
        "nginx-accept-mutex": "accept_mutex",
        "nginx-reuseport": "reuseport",
        "nginx-multi-accept": "multi_accept",
    }
    settings = {"default": "accept_mutex off (the default)", "accept_mutex": "accept_mutex on",
                "reuseport": "listen ... reuseport", "multi_accept": "multi_accept on",
                "work": "/work?us=N spins N us in embedded perl"}
    files = ("nginx.conf",)

    def version(self):
        return version_line([self.path(), "-v"], r"nginx version: (\S+)", "")

    def command(self, setting, d, port, workers, access_log=True):
        path = os.path.join(d, "nginx.conf")
        with open(path, "w") as f:
            f.write(conf(setting, d, port, workers, access_log))
        return [self.path(), "-p", d + "/", "-e", d + "/error.log", "-c", path], {}

    def check_command(self, setting, d, port, workers):
        path = os.path.join(d, "nginx.conf")
        with open(path, "w") as f:
            f.write(conf(setting, d, port, workers))
        return [self.path(), "-t", "-q", "-p", d + "/", "-e", d + "/error.log", "-c", path]

    def log_connections(self, d, start):
        """Distinct connections per $pid (format 'peer': $pid $connection
        $connection_requests $request_uri)."""
        return connections_by_pid((p[0], p[1]) for p in log_lines(d, self.log, start, 3))
