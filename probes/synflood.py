"""synflood.py: sends bare TCP SYNs from a raw socket (root: CAP_NET_RAW), so
a server's listener sees handshakes begin that never complete.

What becomes of each SYN depends on the source address:
  - a local address (the default: the target's own): the server's SYN-ACK
    reaches a port nothing listens on and the kernel answers it with RST,
    so the request socket dies at once;
  - an address routed somewhere that never answers (a veth peer with no
    address, in a network namespace of our own): the SYN-ACK goes
    unanswered and the request lingers in SYN-RECV, retransmitted, like a
    client that gave up mid-handshake.
Either way no connection is ever established: a server that counts SYNs
must stop counting them on its own.

Only loopback or a network namespace we made is ever a target.

  python3 -m probes.synflood --target HOST:PORT [--count N] [--source ADDR] [--first-port P]

Prints one JSON line: {"sent": N, "source": ADDR, "target": "HOST:PORT"}.
Exit 0, 1 if a send failed, 2 on bad usage (one line naming the argument).
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("synflood.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m probes.synflood\n")
    sys.exit(2)

import argparse
import ipaddress
import json
import random
import socket
import struct


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xffff) + (total >> 16)
    return ~total & 0xffff


def syn_packet(src, dst, sport, dport, rng):
    """An IPv4 packet holding a TCP SYN (no options), checksums filled in."""
    tcp = struct.pack("!HHIIBBHHH", sport, dport, rng.getrandbits(32), 0, 5 << 4, 0x02, 65535, 0, 0)
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), rng.getrandbits(16), 0, 64, socket.IPPROTO_TCP,
                     0, socket.inet_aton(src), socket.inet_aton(dst))
    return ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:] + tcp


def flood(host, port, count, source=None, first_port=20000, seed=None):
    """Sends count SYNs to host:port from source (default: host), source
    ports first_port, first_port + 1, ...; returns how many were sent."""
    rng = random.Random(seed)
    src = source or host
    sent = 0
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW) as raw:
        for i in range(count):
            sport = first_port + i % (65536 - first_port)
            raw.sendto(syn_packet(src, host, sport, port, rng), (host, 0))
            sent += 1
    return sent


def target_address(text):
    """(host, port) from IPV4:PORT, or None."""
    host, sep, port = text.rpartition(":")
    try:
        ip = ipaddress.IPv4Address(host)
        port = int(port)
    except ValueError:
        return None
    return (str(ip), port) if sep and 0 < port < 65536 else None


def main():
    ap = argparse.ArgumentParser(description="Send bare TCP SYNs from a raw socket (root).")
    ap.add_argument("--target", required=True, help="IPV4:PORT (loopback or a netns of ours)")
    ap.add_argument("--count", type=int, default=200, help="SYNs to send (default 200)")
    ap.add_argument("--source", help="source address (default: the target's)")
    ap.add_argument("--first-port", type=int, default=20000, help="first source port (default 20000)")
    args = ap.parse_args()
    target = target_address(args.target)
    if not target:
        ap.exit(2, "synflood.py: --target %s: expected IPV4:PORT\n" % args.target)
    if not 1 <= args.count <= 1000000:
        ap.exit(2, "synflood.py: --count %d: expected 1..1000000\n" % args.count)
    if not 1024 <= args.first_port <= 65535:
        ap.exit(2, "synflood.py: --first-port %d: expected 1024..65535\n" % args.first_port)
    if args.source:
        try:
            ipaddress.IPv4Address(args.source)
        except ValueError:
            ap.exit(2, "synflood.py: --source %s: not an IPv4 address\n" % args.source)
    host, port = target
    try:
        sent = flood(host, port, args.count, args.source, args.first_port)
    except PermissionError:
        ap.exit(2, "synflood.py: a raw socket needs root (CAP_NET_RAW)\n")
    except OSError as e:
        print("synflood.py: sending: %s" % e, file=sys.stderr)
        return 1
    print(json.dumps({"sent": sent, "source": args.source or host, "target": "%s:%d" % (host, port)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
