/* targets.h: finding a server's processes in /proc, for a tracer or a
 * diagnosis to watch: the processes of a process group, the processes that
 * hold TCP listeners (on one port, or any), the ports a set of processes
 * listens on, and which descriptors of which processes are given sockets. Reads /proc only, changes nothing; reports errors
 * through an error buffer (redis anet style) and never prints or exits. */
#ifndef ACCEPTLAB_TARGETS_H
#define ACCEPTLAB_TARGETS_H

#include <stddef.h>

#define TARGETS_MAX_PIDS 1024    /* the tracer's targets map holds as many */
#define TARGETS_MAX_PORTS 16     /* the tracer's ports map holds as many */
#define TARGETS_MAX_LISTENERS 4096 /* listening sockets read from /proc/net/tcp{,6} */
#define TARGETS_ERR_LEN 256

/* The processes to watch and the TCP ports they listen on; both lists hold
 * each value once, in the order found. Zero-initialise before use. */
struct targets {
	int pids[TARGETS_MAX_PIDS];
	int npids;
	int ports[TARGETS_MAX_PORTS];
	int nports;
};

/* Adds pid unless t holds it already. 0 on success (or already there), -1
 * when t already holds TARGETS_MAX_PIDS pids. */
int targets_add_pid(struct targets *t, int pid);

/* Adds every process whose process group is pgid (pids beyond
 * TARGETS_MAX_PIDS are dropped). 0, or -1 with err set when /proc cannot be
 * read. */
int targets_add_pgid(struct targets *t, int pgid, char *err, size_t errlen);

/* Adds every process holding a TCP socket that listens on port (IPv4 or
 * IPv6; 0: any port), and each such socket's port (pids beyond
 * TARGETS_MAX_PIDS and ports beyond TARGETS_MAX_PORTS are dropped). 0, or
 * -1 with err set when /proc cannot be read. */
int targets_add_listeners(struct targets *t, int port, char *err, size_t errlen);

/* Adds the TCP ports that t's processes listen on (ports beyond
 * TARGETS_MAX_PORTS are dropped). 0, or -1 with err set when /proc cannot
 * be read. */
int targets_add_listening_ports(struct targets *t, char *err, size_t errlen);

/* Called by targets_scan_sockets for each descriptor fd of process pid
 * that is socket inodes[i]. */
typedef void (*targets_socket_found)(void *ctx, int pid, int fd, int i);

/* Scans /proc/PID/fd of every process (pids != NULL: only pids[0..npids))
 * for links to the socket inodes[0..n) and calls found for each. Processes
 * whose descriptors cannot be read (another user's, without root) are
 * skipped. 0, or -1 with err set when /proc cannot be read. */
int targets_scan_sockets(const unsigned long *inodes, int n, const int *pids, int npids,
			 targets_socket_found found, void *ctx, char *err, size_t errlen);

/* 1 when s is a non-empty run of decimal digits (a /proc entry naming a
 * process, thread or descriptor), else 0. */
int targets_is_digits(const char *s);

/* The first of t's pids with no /proc entry (no such process), or 0 when
 * every one exists. */
int targets_first_missing(const struct targets *t);

#endif
