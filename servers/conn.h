/* conn.h: the harness's inside, shared by worker.c (the loop), conn.c (the
 * connections and their answers), accept.c (the accept path) and the two
 * connection sets (own_epoll.c, shared_epoll.c): a connection's buffers,
 * the connection set, the interface that says how a worker's connections
 * are registered and waited for, and what the loop calls in conn.c and
 * accept.c. Variants do not include it.
 *
 * Calls between these files go one way: worker.c calls accept.c, conn.c
 * and the set; accept.c calls conn.c (worker_admit); the sets call conn.c;
 * conn.c and accept.c reach the set only through w->conn_set's hooks. */
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
	int nodelay;           /* TCP_NODELAY set (conn.c: conn_flush) */
	struct conn *next_spare; /* in the worker's spares (conn.c: conn_free) */
	char in[IN_CAP];       /* last: worker_admit zeroes every field before it, not it */
};

/* How a worker's connections are registered and waited for. The loop
 * (worker.c) and the connections (conn.c) call its hooks through
 * w->conn_set, which the loop sets before anything else runs: the default,
 * own_epoll_conns (each worker its own epoll instance and table), or the set
 * a knob's setup installed in srv->conn_set (shared_epoll.c). */
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
	/* The stop (retire: for a reload; see worker.c) ends the connections:
	 * idle ones close (kept when retiring), busy ones close after their answer. */
	void (*stop)(struct worker *w, int retire);
	/* Ends the connections past a timeout (conn_expired, conn_retired_idle). */
	void (*sweep)(struct worker *w, int64_t now);
	/* The connections a stopping worker waits for. */
	int (*open_count)(const struct worker *w);
};

/* own_epoll.c: the default set. */
extern const struct conn_set own_epoll_conns;

/* conn.c */
/* Past --idle-timeout, or its request head past --header-timeout. */
int conn_expired(const struct worker *w, struct conn *c, int64_t now);
/* w retires for a reload and c, idle, has had its second to send its next
 * request (conn.c: RETIRE_IDLE_MS). */
int conn_retired_idle(const struct worker *w, struct conn *c, int64_t now);
/* A request in progress: bytes buffered either way, or a body to skip. */
static inline int conn_busy(const struct conn *c)
{
	return c->inlen || c->outlen || c->body_left;
}
/* Closes c: out of its set, its memory kept or freed, the variant's
 * conn_closed told. */
void conn_close(struct worker *w, struct conn *c);
/* Serves one of c's epoll events (EPOLLOUT: writes, else reads and
 * answers). Returns 0 if c is still open (the loop re-arms it), -1 if it
 * closed. */
int conn_serve(struct worker *w, struct conn *c, uint32_t events);
/* The first reads of the connections worker_admit took since the last
 * call: the loop calls it once the accept phase of a pass is over. */
void conn_admit_flush(struct worker *w);
/* Frees what w kept for its connections (the spares, the list of fresh
 * ones); the worker's loop has ended. */
void conn_release_memory(struct worker *w);

/* accept.c */
/* The out-of-descriptors rest is over: the listener goes back if the rest
 * took it out. */
void accept_resume(struct worker *w);

#endif
