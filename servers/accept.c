/* accept.c: the accept path's helpers that variants call: the listener in
 * and out of the worker's epoll (through its connection set's hook), accept()
 * with its error's class, and the rest after running out of descriptors.
 * The variant decides when to accept; what follows accept() is conn.c's
 * (worker_admit). The loop (worker.c) calls accept_resume; nothing here
 * calls the loop. */
#include "conn.h"
#include "net.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* accept() failed for want of descriptors (EMFILE, ENFILE, ENOBUFS, ENOMEM):
 * the listener leaves the epoll set for this long, so a level-triggered
 * listener does not spin and an edge-triggered one is retried even if no
 * new connection arrives (nginx rests 500 ms; a shorter rest resumes sooner). */
#define ACCEPT_REST_MS 100

int worker_watch_listener(struct worker *w, uint32_t events, char *err, size_t errlen)
{
	if (worker_listener_enable(w, events, 1) < 0) {
		snprintf(err, errlen, "epoll_ctl(listener, events 0x%x): %s", events, strerror(errno));
		return -1;
	}
	return 0;
}

int worker_listener_enable(struct worker *w, uint32_t events, int on)
{
	struct epoll_event ev = { .events = events, .data.u64 = LISTENER_TAG };

	if (on == w->listener_watched)
		return 0;
	if (on && w->accept_paused_until) {
		errno = EMFILE; /* resting: the loop adds it back when the rest is over */
		return -1;
	}
	if (w->conn_set->listener_ctl(w, on, &ev) < 0)
		return -1;
	w->listener_watched = on;
	if (on)
		w->listener_events = events;
	return 0;
}

/* Out of descriptors: take the listener out for ACCEPT_REST_MS (remembering
 * to put it back only if it was there). */
static void accept_rest(struct worker *w)
{
	w->accept_paused_until = now_ns() + (int64_t)ACCEPT_REST_MS * 1000000;
	if (w->listener_watched && worker_listener_enable(w, 0, 0) == 0)
		w->rest_took_listener = 1; /* kept through a second failure during the rest */
}

void accept_resume(struct worker *w)
{
	int took = w->rest_took_listener;

	w->accept_paused_until = 0;
	w->rest_took_listener = 0;
	if (took && !w->stopping && w->listen_fd >= 0)
		worker_listener_enable(w, w->listener_events, 1);
}

int worker_bind_own_listener(struct worker *w, char *err, size_t errlen)
{
	w->listen_fd = net_listen_tcp(w->srv->cfg.host, w->srv->bound_port, 1, err, errlen);
	return w->listen_fd < 0 ? -1 : 0;
}

static enum accept_result accept_class(int err)
{
	switch (err) {
	case EAGAIN:
		return ACCEPT_AGAIN;
	case EINTR:
		return ACCEPT_INTERRUPTED;
	case ECONNABORTED:
		return ACCEPT_TRANSIENT;
	case EMFILE:
	case ENFILE:
	case ENOBUFS:
	case ENOMEM:
		return ACCEPT_NO_FDS;
	default:
		return ACCEPT_HARD;
	}
}

enum accept_result worker_accept(struct worker *w, struct sockaddr_in *peer, int *fd)
{
	socklen_t len = sizeof(*peer);
	enum accept_result r;

	do {
		*fd = accept4(w->listen_fd, (struct sockaddr *)peer, peer ? &len : NULL,
			      SOCK_NONBLOCK | SOCK_CLOEXEC);
		r = *fd >= 0 ? ACCEPT_OK : accept_class(errno);
	} while (r == ACCEPT_TRANSIENT);
	if (r == ACCEPT_OK)
		w->accepted++;
	else if (r == ACCEPT_AGAIN)
		w->accept_eagain++;
	else if (r != ACCEPT_INTERRUPTED)
		w->accept_errors++;
	return r;
}

int worker_accept_one(struct worker *w, struct sockaddr_in *peer)
{
	int fd;
	enum accept_result r = worker_accept(w, peer, &fd);

	if (r == ACCEPT_NO_FDS)
		accept_rest(w);
	return r == ACCEPT_OK ? fd : -1;
}

int worker_accept_batch(struct worker *w, int max)
{
	int got = 0, fd;

	while ((max < 0 || got < max) && (fd = worker_accept_one(w, NULL)) >= 0) {
		got++;
		worker_admit(w, fd);
	}
	return got;
}
