"""The interface every server software the peers and the census start
implements: one module per software in this folder, one class each,
registered in __init__.py's SOFTWARE.

A Software knows how to configure its server in a temp dir for a setting,
a loopback port and a worker count; how to find its workers once they are
up; what its version is; and, where the server keeps one, how to read its
own record of which worker served each connection (an access log with the
worker's pid). probes/peers/peers.py's Peer starts, waits for and stops
any of them alike."""

import os
import re
import shutil
import socket
import subprocess


def which(prog):
    """The executable prog on PATH or in /usr/sbin, /sbin; None if missing."""
    return shutil.which(prog) or next((p for p in ("/usr/sbin/" + prog, "/sbin/" + prog)
                                       if os.access(p, os.X_OK)), None)


def children(pid):
    """The child processes of pid (all its threads' children)."""
    out = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return sorted(set(out))


def descendants(pid):
    """Every process below pid, breadth first."""
    out, todo = [], [pid]
    while todo:
        kids = children(todo.pop(0))
        out += kids
        todo += kids
    return out


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return None


def threads(pid):
    try:
        return sorted(int(t) for t in os.listdir("/proc/%d/task" % pid))
    except OSError:
        return []


def version_line(cmd, pattern, prefix, stream="stdout"):
    """prefix + the first group of pattern in what cmd prints, or None."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError, TypeError):
        return None
    m = re.search(pattern, out.stdout + out.stderr)
    return prefix + m.group(1) if m else None


def http_get(port, path="/peer-ready", timeout=1.0):
    """One GET path with Connection: close on 127.0.0.1:port: everything the
    server sent until it closed. Raises OSError."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(("GET %s HTTP/1.1\r\nHost: acceptlab\r\nConnection: close\r\n\r\n" % path).encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk


def connections_by_pid(pairs):
    """{pid: distinct connections} from (pid, connection key) pairs."""
    counts = {}
    for pid, _ in set(pairs):
        counts[str(pid)] = counts.get(str(pid), 0) + 1
    return counts


def write_docroot(d):
    """d/www with an index.html, readable by a server that dropped root;
    returns the directory."""
    www = os.path.join(d, "www")
    os.makedirs(www, exist_ok=True)
    os.chmod(www, 0o755)
    index = os.path.join(www, "index.html")
    with open(index, "w") as f:
        f.write("acceptlab\n")
    os.chmod(index, 0o644)
    return www


def write_config(d, name, text):
    """Writes text to d/name; returns the path."""
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def log_lines(d, log, start, path_at):
    """The whitespace-split lines of d/log from byte offset start, the
    readiness requests (path column path_at starting /peer-ready) left out."""
    for line in read_from(os.path.join(d, log), start).splitlines():
        parts = line.split()
        if len(parts) > path_at and not parts[path_at].startswith("/peer-ready"):
            yield parts


def read_from(path, start):
    """The text of path from byte offset start ('' if it is missing)."""
    try:
        with open(path, "rb") as f:
            f.seek(start)
            return f.read().decode(errors="replace")
    except OSError:
        return ""


class Software:
    """One server software. Subclasses set the class attributes and
    implement command(); the rest has defaults that suit most."""

    name = None          # the software's key ("apache")
    binary = None        # its executable (looked up by which())
    packages = ()        # the Debian packages that bring it (make deps installs them)
    mode = "process"     # its workers are processes, or "threads" of one process
    answers_pid = False  # answers every request with its worker's id (the peers study's probe asks /pid)
    http = True          # speaks HTTP (else the diagnosis loads it with --tcp)
    truth = None         # its own record of who served: e.g. "Apache access log %P"; None: sock_diag only
    log = "access.log"   # that record's file in its dir
    configs = {}         # configuration name -> setting
    settings = {}        # setting -> what it sets, in the software's own words
    documented = {}      # setting -> what the software's own --help says the setting does (quoted)
    files = ()           # its configuration files in its dir, kept beside the run's raw output
    start_timeout = 15.0

    def path(self):
        return which(self.binary)

    def version(self):
        """Its version, as its own -v says it ("apache2/2.4.71"), or None."""
        return None

    def command(self, setting, d, port, workers, access_log=True):
        """Writes its configuration into dir d for this setting, 127.0.0.1:port
        and workers; returns (argv, extra environment). The server runs in
        the foreground, in its own session, until its group is signalled."""
        raise NotImplementedError

    def check_command(self, setting, d, port, workers):
        """argv that tests the configuration command() wrote (exit 0 when the
        software accepts it), or None when it has no such test."""
        return None

    def workers(self, proc, d, workers):
        """[(pid, tid)] of its workers once all of them are up, else None.
        Default: the direct children of the process started, when there
        are as many as workers."""
        kids = children(proc.pid)
        return [(k, k) for k in kids] if len(kids) == workers else None

    def ready(self, port):
        """True once it answers on port. Default: any complete HTTP status
        line to a GET /peer-ready."""
        try:
            return http_get(port).startswith(b"HTTP/1.")
        except OSError:
            return False

    def log_connections(self, d, start):
        """{pid: connections} its own record holds from byte offset start of
        its log (truth is set), the readiness requests left out."""
        raise NotImplementedError

    def ready_extra(self, d):
        """Fields its ready line adds (a Node primary's policy)."""
        return {}

    def keeps_pid_log(self):
        """Whether it keeps a record of which worker pid served (it
        implements log_connections)."""
        return type(self).log_connections is not Software.log_connections

    def log_size(self, d):
        try:
            return os.path.getsize(os.path.join(d, self.log))
        except OSError:
            return 0
