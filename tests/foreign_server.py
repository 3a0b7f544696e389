"""A tiny prefork HTTP server that is not acceptlab's, for checking the probe
against ground truth.

N forked workers block in accept() on one shared listener and answer every
request with their own pid (in the body, or in a header with --header), and
each worker writes one line per connection it handled to <log-dir>/<pid>.log
("answered" or "dropped"), so a test can compare the probe's counts with what
the workers actually did. Prints the acceptlab-style ready line, then serves
until SIGTERM.

  --idle-workers K     the last K workers never accept (a known, total skew)
  --drop-every D       each worker closes every D-th connection unanswered
  --switch-ids         on a connection's second and later requests answer
                       "<pid>-b", as if another worker had answered it
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("foreign_server.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m tests.foreign_server\n")
    sys.exit(2)

import argparse
import json
import os
import signal
import socket
import threading
import time


def serve_connection(conn, pid, args, header_name):
    buf = b""
    nreq = 0
    while True:
        while b"\r\n\r\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                return
            buf += chunk
        head, buf = buf.split(b"\r\n\r\n", 1)
        nreq += 1
        ident = "%d" % pid if not (args.switch_ids and nreq > 1) else "%d-b" % pid
        close = b"connection: close" in head.lower()
        if header_name:
            body = b"ok\n"
            extra = "%s: %s\r\n" % (header_name, ident)
        else:
            body = (ident + "\n").encode()
            extra = ""
        conn.sendall(("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%sConnection: %s\r\n\r\n"
                      % (len(body), extra, "close" if close else "keep-alive")).encode() + body)
        if close:
            return


def serve_and_close(conn, pid, args):
    """A thread per connection, so held keep-alive connections do not block accept."""
    try:
        serve_connection(conn, pid, args, args.header)
    except OSError:
        pass
    finally:
        conn.close()


def worker(lsock, index, args):
    pid = os.getpid()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    if index >= args.workers - args.idle_workers:
        while True:
            time.sleep(3600)
    log = open(os.path.join(args.log_dir, "%d.log" % pid), "a", buffering=1)
    n = 0
    while True:
        conn, _ = lsock.accept()
        n += 1
        if args.drop_every and n % args.drop_every == 0:
            log.write("dropped\n")
            conn.close()
            continue
        log.write("answered\n")
        threading.Thread(target=serve_and_close, args=(conn, pid, args), daemon=True).start()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--log-dir", required=True)
    ap.add_argument("--idle-workers", type=int, default=0)
    ap.add_argument("--drop-every", type=int, default=0)
    ap.add_argument("--switch-ids", action="store_true")
    ap.add_argument("--header", default=None, help="answer the id in this header, not the body")
    args = ap.parse_args()

    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(1024)
    pids = []
    for i in range(args.workers):
        pid = os.fork()
        if pid == 0:
            try:
                worker(lsock, i, args)
            finally:
                os._exit(1)
        pids.append(pid)
    ready = {"event": "ready", "port": lsock.getsockname()[1], "variant": "foreign", "mode": "process",
             "workers": [{"index": i, "pid": p, "tid": p, "cpu": ""} for i, p in enumerate(pids)]}
    print(json.dumps(ready, separators=(",", ":")), flush=True)

    def stop(*_):
        for p in pids:
            os.kill(p, signal.SIGKILL)
        for p in pids:
            os.waitpid(p, 0)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
