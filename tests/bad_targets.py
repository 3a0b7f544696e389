"""A deliberately bad server for the probe's error accounting
(tests/test_probe.py): it listens on 127.0.0.1, prints its port on stdout
(one line), and misbehaves on every connection the same way until killed.

Modes:
  silent   accepts, reads what it is sent, never answers, never closes
  close    accepts and closes its side at once (an orderly FIN, nothing said;
           what the client sends later is read and dropped, not reset)
  garbage  answers each request with bytes that are not HTTP, then holds the
           connection open (so only the bytes, not a close, can tell the
           probe it was not answered)
  reset    accepts and closes with SO_LINGER 0 (an RST)
  truncated  answers each request with the start of a 200 response (its
           Content-Length promises more than it sends), then closes its side

usage: python3 -m tests.bad_targets MODE [--port P]
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("bad_targets.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m tests.bad_targets\n")
    sys.exit(2)

import argparse
import selectors
import socket
import struct

TRUNCATED = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n12"
GARBAGE = b"\x00\xffnot http, and no newline either"  # no line end: only its first bytes can tell


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["silent", "close", "garbage", "reset", "truncated"])
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()

    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", args.port))
    ls.listen(1024)
    ls.setblocking(False)
    print(ls.getsockname()[1], flush=True)

    sel = selectors.DefaultSelector()
    sel.register(ls, selectors.EVENT_READ)
    held = {}  # silent/garbage: every connection stays open until its peer leaves
    while True:
        for key, _ in sel.select():
            if key.fileobj is ls:
                while True:
                    try:
                        c, _ = ls.accept()
                    except BlockingIOError:
                        break
                    if args.mode == "close":
                        # FIN now; then read and drop until the peer leaves,
                        # so a request that arrives later is not answered
                        # with an RST (that is the reset mode).
                        c.shutdown(socket.SHUT_WR)
                        c.setblocking(False)
                        held[c.fileno()] = c
                        sel.register(c, selectors.EVENT_READ)
                    elif args.mode == "reset":
                        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        c.close()
                    else:
                        c.setblocking(False)
                        held[c.fileno()] = c
                        sel.register(c, selectors.EVENT_READ)
                continue
            c = key.fileobj
            try:
                data = c.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:
                sel.unregister(c)
                held.pop(c.fileno(), None)
                c.close()
            elif args.mode in ("garbage", "truncated"):
                try:
                    c.send(GARBAGE if args.mode == "garbage" else TRUNCATED)
                    if args.mode == "truncated":
                        c.shutdown(socket.SHUT_WR)
                except OSError:
                    pass


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
