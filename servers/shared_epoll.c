/* shared_epoll.c: --shared-epoll (bare, threads mode), a connection set
 * (conn.h) in which every thread waits in ONE epoll instance that holds the
 * listener and every connection, so the kernel, not the thread that
 * accepted, decides which thread serves each event. The knob's setup makes
 * the instance and the table once, before the threads start, and installs
 * the set.
 *  - Connections are registered EPOLLONESHOT: an event disarms the
 *    connection until the thread serving it re-arms it at the end, so one
 *    connection is never served by two threads at once.
 *  - The table is allocated once (no realloc while others read it). A slot
 *    changes only under the lock: set by the acceptor before the connection
 *    is armed, cleared by the thread that closes it. Only the thread serving
 *    a connection's event closes it.
 *  - The idle sweep and the stop do not close others' connections: they
 *    shut their read side down under the lock, which raises an event, and
 *    the thread that serves it reads EOF and closes as for any peer. */
#include "conn.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

struct conn_table {
	struct conn **slots;
	int cap;
	int epfd;
	pthread_mutex_t lock;
	_Atomic int open;
};

static struct conn_table table;
static int shared_epoll_wanted; /* --shared-epoll given */

static int shared_open(struct worker *w)
{
	w->epfd = table.epfd;
	w->conns = table.slots;
	w->nconns_cap = table.cap;
	return 0;
}

/* One registration serves every thread; the first thread's ADD (or DEL) is
 * everyone's. An ADD that finds another thread's registration re-arms it
 * with MOD, which checks readiness anew: the listener is edge-triggered,
 * and its last edge may have gone to a thread that then failed to accept
 * (EMFILE) while this one rested, leaving a full queue that no new edge
 * would ever report. */
static int shared_listener_ctl(struct worker *w, int on, struct epoll_event *ev)
{
	if (epoll_ctl(w->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, w->listen_fd, ev) < 0) {
		if (errno != (on ? EEXIST : ENOENT))
			return -1;
		if (on && epoll_ctl(w->epfd, EPOLL_CTL_MOD, w->listen_fd, ev) < 0)
			return -1;
	}
	return 0;
}

/* In the table first, armed last (after its first read): no other thread
 * can be handed its event while this one still reads it. */
static int shared_add(struct worker *w, struct conn *c)
{
	if (c->fd >= w->nconns_cap)
		return -1; /* the shared table never grows */
	pthread_mutex_lock(&table.lock);
	table.slots[c->fd] = c;
	pthread_mutex_unlock(&table.lock);
	atomic_fetch_add(&table.open, 1);
	return 0;
}

/* Arms c for its next event (it was disarmed when this thread was handed
 * the last one), or for its first with op EPOLL_CTL_ADD. */
static int shared_ctl(struct worker *w, struct conn *c, int op)
{
	struct epoll_event ev = { .events = (c->writing ? EPOLLOUT : EPOLLIN) | EPOLLONESHOT,
				  .data.u64 = (uint64_t)c->fd };

	return epoll_ctl(w->epfd, op, c->fd, &ev);
}

static int shared_arm(struct worker *w, struct conn *c)
{
	return shared_ctl(w, c, EPOLL_CTL_ADD);
}

static void shared_rearm(struct worker *w, struct conn *c)
{
	shared_ctl(w, c, EPOLL_CTL_MOD);
}

static void shared_set_writing(struct worker *w, struct conn *c)
{
	(void)w;
	(void)c; /* shared_rearm arms it for the new direction when this thread is done */
}

static void shared_drop(struct worker *w, struct conn *c)
{
	epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	pthread_mutex_lock(&table.lock);
	table.slots[c->fd] = NULL;
	close(c->fd); /* under the lock: the fd is not reused while a sweep looks */
	pthread_mutex_unlock(&table.lock);
	atomic_fetch_sub(&table.open, 1);
}

/* Shuts down the read side of every connection past the idle or header
 * timeout (all: of every connection), under the table's lock. Whichever
 * thread serves the event that raises reads EOF and closes it (a head
 * still incomplete gets no answer). */
static void shutdown_reads(struct worker *w, int64_t now, int all)
{
	pthread_mutex_lock(&table.lock);
	for (int fd = 0; fd < table.cap; fd++) {
		struct conn *c = table.slots[fd];
		if (c && (all || conn_expired(w, c, now)))
			shutdown(fd, SHUT_RD);
	}
	pthread_mutex_unlock(&table.lock);
}

/* Every connection's read side ends; whichever thread serves its event
 * answers what it has read (saying close) and closes. (Threads mode has no
 * reload: retire is never set here.) */
static void shared_stop(struct worker *w, int retire)
{
	(void)retire;
	shutdown_reads(w, 0, 1);
}

static void shared_sweep(struct worker *w, int64_t now)
{
	shutdown_reads(w, now, 0);
}

static int shared_open_count(const struct worker *w)
{
	(void)w;
	return atomic_load(&table.open);
}

static const struct conn_set shared_conns = {
	.open = shared_open,
	.listener_ctl = shared_listener_ctl,
	.add = shared_add,
	.arm = shared_arm,
	.rearm = shared_rearm,
	.set_writing = shared_set_writing,
	.drop = shared_drop,
	.stop = shared_stop,
	.sweep = shared_sweep,
	.open_count = shared_open_count,
};

/* ---- the knob ---- */

static int shared_epoll_check(const struct server_config *cfg, char *err, size_t errlen)
{
	if (shared_epoll_wanted && !cfg->threads) {
		snprintf(err, errlen, "--shared-epoll: threads mode only (one epoll instance is shared within a "
			 "process; use --threads N)");
		return -1;
	}
	return 0;
}

static int shared_epoll_setup(struct server *srv, char *err, size_t errlen)
{
	struct rlimit rl;

	if (!shared_epoll_wanted)
		return 0;
	table.cap = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (1u << 20) ? (int)rl.rlim_cur : 1 << 20;
	table.slots = calloc((size_t)table.cap, sizeof(*table.slots));
	table.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!table.slots || table.epfd < 0) {
		snprintf(err, errlen, "--shared-epoll: %s", table.slots ? strerror(errno) : "out of memory");
		return -1;
	}
	pthread_mutex_init(&table.lock, NULL);
	srv->conn_set = &shared_conns;
	return 0;
}

static const struct knob shared_epoll_options[] = {
	{ .name = "--shared-epoll",
	  .help = "  --shared-epoll        bare, threads mode: every thread waits in ONE epoll\n"
		  "                        instance holding the listener and all connections\n",
	  .flag = &shared_epoll_wanted },
	{ .name = NULL },
};

const struct knob_set shared_epoll_knobs = {
	.knobs = shared_epoll_options,
	.check = shared_epoll_check,
	.setup = shared_epoll_setup,
};
