/* conn.h: the harness's inside, shared by worker.c (the loop and the
 * connections), accept.c (the accept path) and shared_epoll.c: a
 * connection's buffers, and the connection set, the interface that says how
 * a worker's connections are registered and waited for. Variants do not
 * include it. */
#ifndef ACCEPTLAB_CONN_H
#define ACCEPTLAB_CONN_H

#include "server.h"
#include "http.h"

#include <stdint.h>
#include <sys/epoll.h>

#define IN_CAP (HTTP_MAX_HEAD + 8192) /* room for a full head plus pipelined bytes */

struct conn {
	int fd;
	size_t inlen;
	uint64_t body_left;  /* bytes of a request body still to discard */
	char *out;
	size_t outlen, outoff, outcap;
	int64_t last_active_ns; /* read by other threads' sweeps: touch() and idle_ns() */
	/* When the request head now incomplete in in[] got its first byte; 0
	 * when none is (nothing buffered, a body being skipped, or only
	 * complete requests waiting for output to drain). The header timeout
	 * runs from it; read by other threads' sweeps like last_active_ns. */
	int64_t head_started_ns;
	int close_after_write; /* an answer said Connection: close */
	int peer_closed;       /* read() returned 0 */
	int writing;           /* EPOLLOUT registered */
	int nodelay;           /* TCP_NODELAY set (worker.c: conn_flush) */
	struct conn *next_spare; /* in the worker's spares (worker.c: conn_free) */
	char in[IN_CAP];       /* last: worker_admit zeroes every field before it, not it */
};

/* How a worker's connections are registered and waited for. The core
 * (worker.c) calls every hook; its own set (each worker its own epoll
 * instance and table) is the default, and a knob's setup may install
 * another in srv->conn_set (shared_epoll.c). */
struct conn_set {
	/* Once, before the variant's worker_start: w->epfd, w->conns and
	 * w->nconns_cap. 0, or -1 with errno. */
	int (*open)(struct worker *w);
	/* EPOLL_CTL_ADD (on) or EPOLL_CTL_DEL of the listener with ev: 0, or
	 * -1 with errno. */
	int (*listener_ctl)(struct worker *w, int on, struct epoll_event *ev);
	/* A new connection, not read yet: into the table. 0, or -1 (not
	 * taken: the caller closes and frees it). */
	int (*add)(struct worker *w, struct conn *c);
	/* c's first read is done and c is open: its events may come. 0, or
	 * -1 if it cannot be registered (the caller closes it). */
	int (*arm)(struct worker *w, struct conn *c);
	/* One of c's events was served and c is open: ready for its next. */
	void (*rearm)(struct worker *w, struct conn *c);
	/* c->writing changed: wait for EPOLLOUT (writing) or EPOLLIN. */
	void (*set_writing)(struct worker *w, struct conn *c);
	/* c is out of the epoll set: close its fd and clear its table entry. */
	void (*drop)(struct worker *w, struct conn *c);
	/* The stop (retire: for a reload; see worker.c) ends the connections. */
	void (*stop)(struct worker *w, int retire);
	/* Ends the connections past a timeout (conn_expired). */
	void (*sweep)(struct worker *w, int64_t now);
	/* The connections a stopping worker waits for. */
	int (*open_count)(const struct worker *w);
};

/* worker.c */
/* srv->conn_set, or the default: each worker its own epoll instance. */
const struct conn_set *conn_set_of(const struct worker *w);
/* Past --idle-timeout, or its request head past --header-timeout. */
int conn_expired(const struct worker *w, struct conn *c, int64_t now);

/* accept.c */
/* The out-of-descriptors rest is over: the listener goes back if the rest
 * took it out. */
void accept_resume(struct worker *w);

#endif
