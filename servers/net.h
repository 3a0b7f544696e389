/* net.h: socket helpers in the style of redis's anet: they report errors in
 * a caller's buffer and never print or exit. */
#ifndef ACCEPTLAB_NET_H
#define ACCEPTLAB_NET_H

#include <stddef.h>

#define NET_BACKLOG 4096

/* Binds and listens on host:port (IPv4 dotted quad), non-blocking,
 * SO_REUSEADDR, plus SO_REUSEPORT when reuseport is set. Returns the fd,
 * or -1 with a reason in err (errno kept: EADDRINUSE for a port in use). */
int net_listen_tcp(const char *host, int port, int reuseport, char *err, size_t errlen);

/* Claims host:port for a group of SO_REUSEPORT listeners bound later:
 * first an exclusive bind (fails if anything listens there, a reuseport
 * group of ours included), then an anchor socket bound with SO_REUSEPORT and
 * without SO_REUSEADDR that never listens, so it is never chosen for a
 * connection but makes any later exclusive bind fail for as long as it is
 * held. Returns the anchor fd and sets *bound_port (port 0 picks one), or -1
 * with a reason in err. */
int net_claim_reuseport(const char *host, int port, int *bound_port, char *err, size_t errlen);

/* The port a bound socket has, or -1. */
int net_local_port(int fd);

/* Makes fd non-blocking; 0 or -1. */
int net_nonblock(int fd);

/* Turns Nagle off; 0 or -1. */
int net_nodelay(int fd);

#endif
