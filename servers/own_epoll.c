/* own_epoll.c: the default connection set (conn.h): each worker waits in
 * an epoll instance of its own, which holds its listener (when the variant
 * registers it) and its connections, level-triggered, in a table of its
 * own indexed by fd. The other set is shared_epoll.c's. */
#include "conn.h"

#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

static int own_open(struct worker *w)
{
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	return w->epfd < 0 ? -1 : 0;
}

static int own_listener_ctl(struct worker *w, int on, struct epoll_event *ev)
{
	return epoll_ctl(w->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, w->listen_fd, ev);
}

/* Grows the table to hold fd, then registers c (level-triggered EPOLLIN). */
static int own_add(struct worker *w, struct conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)c->fd };

	if (c->fd >= w->nconns_cap) {
		int cap = w->nconns_cap ? w->nconns_cap : 1024;
		struct conn **n;

		while (cap <= c->fd)
			cap *= 2;
		n = realloc(w->conns, (size_t)cap * sizeof(*n));
		if (!n)
			return -1;
		memset(n + w->nconns_cap, 0, (size_t)(cap - w->nconns_cap) * sizeof(*n));
		w->conns = n;
		w->nconns_cap = cap;
	}
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0)
		return -1;
	w->conns[c->fd] = c;
	return 0;
}

/* Registered by own_add, and level-triggered: nothing to arm. */
static int own_arm(struct worker *w, struct conn *c)
{
	(void)w;
	(void)c;
	return 0;
}

static void own_rearm(struct worker *w, struct conn *c)
{
	(void)w;
	(void)c;
}

static void own_set_writing(struct worker *w, struct conn *c)
{
	struct epoll_event ev = { .events = c->writing ? EPOLLOUT : EPOLLIN, .data.u64 = (uint64_t)c->fd };

	epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* No EPOLL_CTL_DEL first: closing a socket's last descriptor takes it out
 * of every epoll set, and a connection's descriptor here is its only one
 * (fdpass's sender closes its own once sent). */
static void own_drop(struct worker *w, struct conn *c)
{
	close(c->fd);
	w->conns[c->fd] = NULL;
}

/* Idle connections close now (a retiring worker keeps them for their next
 * request); the answer in progress on a busy one says close. */
static void own_stop(struct worker *w, int retire)
{
	for (int fd = 0; fd < w->nconns_cap; fd++) {
		struct conn *c = w->conns[fd];
		if (!c)
			continue;
		if (conn_busy(c))
			c->close_after_write = 1; /* the answer in progress says close */
		else if (!retire)
			conn_close(w, c);
	}
}

/* Closes connections idle past --idle-timeout and those whose request
 * head is still incomplete past --header-timeout (a slowloris: closed with
 * no answer; what it sent is dropped). */
static void own_sweep(struct worker *w, int64_t now)
{
	for (int fd = 0; fd < w->nconns_cap; fd++) {
		struct conn *c = w->conns[fd];
		if (c && (conn_expired(w, c, now) || conn_retired_idle(w, c, now)))
			conn_close(w, c);
	}
}

static int own_open_count(const struct worker *w)
{
	return w->open_conns;
}

const struct conn_set own_epoll_conns = {
	.open = own_open,
	.listener_ctl = own_listener_ctl,
	.add = own_add,
	.arm = own_arm,
	.rearm = own_rearm,
	.set_writing = own_set_writing,
	.drop = own_drop,
	.stop = own_stop,
	.sweep = own_sweep,
	.open_count = own_open_count,
};
