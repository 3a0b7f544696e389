"""h2o: one process, num-threads event-loop threads (the main thread runs
the first loop), each with its own epoll holding the one shared listening
socket (a dup of it per thread), accepting for itself. One more thread
sleeps in a timer loop, and a perl child annotates crash backtraces. Every
thread is named "h2o". Started as root it switches to nobody (no user:
directive). It logs no worker: the census counts by socket ownership only."""

from probes.peers.software.base import Software, threads, version_line, write_config, write_docroot


def conf(d, port, workers):
    return f"""num-threads: {workers}
listen:
  host: 127.0.0.1
  port: {port}
error-log: {d}/error.log
hosts:
  default:
    paths:
      /:
        file.dir: {d}/www
"""


class H2o(Software):
    name = "h2o"
    binary = "h2o"
    packages = ("h2o",)
    mode = "threads"
    configs = {"h2o-threads": "default"}
    settings = {"default": "num-threads = workers"}
    files = ("h2o.conf",)

    def version(self):
        return version_line([self.path(), "-v"], r"h2o version (\S+)", "h2o/")

    def write(self, d, port, workers):
        write_docroot(d)
        return write_config(d, "h2o.conf", conf(d, port, workers))

    def command(self, setting, d, port, workers, access_log=True):
        return [self.path(), "-c", self.write(d, port, workers)], {}

    def check_command(self, setting, d, port, workers):
        return [self.path(), "-t", "-c", self.write(d, port, workers)]

    def workers(self, proc, d, workers):
        """Its threads blocked in epoll_wait (the names do not tell the
        event loops from the timer thread), once there are workers of them:
        at start every loop is idle."""
        loops = []
        for t in threads(proc.pid):
            try:
                with open("/proc/%d/task/%d/wchan" % (proc.pid, t)) as f:
                    if "epoll" in f.read():
                        loops.append((proc.pid, t))
            except OSError:
                pass
        return loops if len(loops) == workers else None
