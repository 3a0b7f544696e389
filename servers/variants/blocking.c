/* blocking: every worker blocked in accept() on one shared listener, as
 * php-fpm's children wait on their pool's socket (pm = static) and other
 * pre-fork servers run. The listener is bound before the fork without
 * O_NONBLOCK and is in no epoll; each worker's one thread loops: accept()
 * blocks; serve that one connection; close; accept again.
 *
 * The kernel queues the threads blocked in accept() on the listener's wait
 * queue as exclusive waiters, each at the tail, and a new connection wakes
 * the one at the head: the worker that has waited longest (first in, first
 * out). A worker that finds a connection queued when it calls accept()
 * takes it without waiting.
 *
 * One connection at a time: a worker holding a connection cannot accept,
 * so a connection gets one answer, which says Connection: close (as
 * php-fpm's FastCGI requests and gunicorn's sync workers do); pipelined
 * requests after the first are not answered (.one_request). A kept-alive
 * connection would hold its worker until the client closed it.
 *
 * Where the harness's hooks fall: the wait for a new connection is the
 * accept() inside pass_begin (worker_accept_blocking, with the stop signals
 * deliverable there as inside epoll_pwait: a stop or a reload's retirement
 * interrupts it with EINTR). The connection accepted is then served by the
 * harness like any other (conn.c): non-blocking, the worker's one
 * connection in its own epoll, which waits for its request as a blocking
 * read() would. While it is open the worker does not accept.
 *
 * Timeouts. A worker that waits for a request holds its only slot, so the
 * header timeout runs from the accept, not from the first byte: a client
 * that connects and sends nothing, or a head that never completes, is
 * closed without an answer --header-timeout seconds after the accept (the
 * variant shuts the socket down; the harness then reads its end and closes
 * it). Once its answer is written the connection closes. accept() itself
 * waits at most ACCEPT_WAIT_MS (SO_RCVTIMEO on the listener), then goes back
 * to the loop and waits again: that bounds how late a stop signal that
 * slipped in just before accept() is seen, and runs the loop's sweeps. */
#include "../server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#define ACCEPT_WAIT_MS 1000

/* Per worker (w->vstate): the connection it serves, if any. */
struct blocking_worker {
	int fd;                 /* the connection accepted, or -1 */
	int64_t accepted_ns;    /* when */
	uint64_t requests_then; /* w->requests at the accept: more once it is answered */
};

/* The shared listener: blocking, each accept() waiting ACCEPT_WAIT_MS at
 * most. The flag is the open file's, so every worker (forked, exec'd by
 * --spawn-workers, or a thread) shares it. */
static int blocking_before_fork(struct server *srv, char *err, size_t errlen)
{
	struct timeval tv = { ACCEPT_WAIT_MS / 1000, (ACCEPT_WAIT_MS % 1000) * 1000 };
	int fl = fcntl(srv->listen_fd, F_GETFL);

	if (fl < 0 || fcntl(srv->listen_fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		snprintf(err, errlen, "clearing O_NONBLOCK on the listener: %s", strerror(errno));
		return -1;
	}
	if (setsockopt(srv->listen_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		snprintf(err, errlen, "SO_RCVTIMEO on the listener: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int blocking_start(struct worker *w, char *err, size_t errlen)
{
	struct blocking_worker *b = calloc(1, sizeof(*b));

	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	b->fd = -1;
	w->vstate = b; /* freed with the worker's process or thread: it serves until it exits */
	return 0; /* the listener is in no epoll */
}

/* The connection held: how long the loop may wait for its request (ms), or
 * -1 once it has been answered (the idle timeout then covers a client that
 * does not read its answer). Past --header-timeout from the accept, the
 * socket is shut down: the loop reads its end and closes it. */
static int held_wait(struct worker *w, struct blocking_worker *b)
{
	int64_t left;

	if (b->fd < 0 || w->requests != b->requests_then)
		return -1;
	left = b->accepted_ns + (int64_t)w->srv->cfg.header_timeout_s * 1000000000 - now_ns();
	if (left > 0)
		return (int)(left / 1000000) + 1;
	shutdown(b->fd, SHUT_RDWR);
	b->fd = -1;
	return 0;
}

static int blocking_pass_begin(struct worker *w)
{
	struct blocking_worker *b = w->vstate;
	int fd;

	if (w->open_conns > 0)
		return held_wait(w, b);
	b->fd = -1;
	if (w->accept_paused_until)
		return -1; /* out of descriptors: the loop waits out the rest */
	fd = worker_accept_blocking(w);
	if (fd < 0)
		return 0; /* the loop's stop check and sweep, then wait again */
	w->clock_ns = now_ns(); /* the connection's idle time starts now, not at the last pass */
	if (worker_admit(w, fd) < 0)
		return 0;
	b->fd = fd;
	b->accepted_ns = w->clock_ns;
	b->requests_then = w->requests;
	return held_wait(w, b);
}

const struct accept_variant variant_blocking = {
	.name = "blocking",
	.mechanism = "one shared listener without `O_NONBLOCK` and in no epoll: each worker blocks in `accept()`, "
		     "serves that one connection (one answer, `Connection: close`) and accepts again, as php-fpm's "
		     "children do; the longest waiter is woken first",
	.one_request = 1,
	.before_fork = blocking_before_fork,
	.worker_start = blocking_start,
	.pass_begin = blocking_pass_begin,
};
