/* handoff: per-thread SO_REUSEPORT listeners, plus a user-level hand-off of
 * new connections between threads (the hand-off design note, seed 003).
 * Threads mode only: the queue moves descriptor numbers, which mean the same
 * connection only inside one process.
 *
 * The parts:
 *  - Each thread binds its own SO_REUSEPORT listener (the kernel's 4-tuple
 *    hash picks the thread, as in reuseport) and accepts until EAGAIN.
 *  - One bounded queue per thread (handoff.c: a ring under a pthread mutex
 *    that refuses when full and never blocks) and one eventfd per thread to
 *    wake it (VARIANT_TAG, edge-triggered).
 *  - For each accepted connection the policy (--handoff-policy) picks a
 *    target with handoff_choose_target(local thread, its open connections):
 *      written: the note's rule as written: the peer with the shortest
 *               queue, when the local load exceeds that queue's depth by
 *               --steal-threshold;
 *      open:    the same, with the peer's load taken as its open
 *               connections plus its queue (the corrected arm);
 *      off:     never (plain reuseport, the knob-off arm).
 *    A refused push (full or closed queue) keeps the connection here.
 *  - The owner drains its queue at the top of every loop pass and whenever
 *    its eventfd fires (read the eventfd first, then drain, so a push that
 *    lands after the drain also leaves the eventfd set), admitting each
 *    connection through the accept path's tail (worker_admit).
 *  - Each thread publishes its open-connection count in the pool after every
 *    admit and close (the open policy reads it).
 *  - Leaving: the queue is closed (later pushes refuse), then what is queued
 *    is pushed to a peer that has not left, or admitted here when none is.
 */
#include "../server.h"
#include "../handoff.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct ho_shared {
	struct handoff_pool pool;
	int wake[MAX_WORKERS];
};

struct ho_worker {
	struct ho_shared *sh;
	uint64_t handed, received, kept_refused;
};

static struct ho_shared the_shared;

static int handoff_before_fork(struct server *srv, char *err, size_t errlen)
{
	struct ho_shared *sh = &the_shared;

	if (handoff_pool_init(&sh->pool, srv->cfg.workers, (enum handoff_policy)srv->cfg.handoff_policy,
			      srv->cfg.handoff_capacity, srv->cfg.steal_threshold) < 0) {
		snprintf(err, errlen, "handoff pool: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < srv->cfg.workers; i++) {
		sh->wake[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (sh->wake[i] < 0) {
			snprintf(err, errlen, "eventfd: %s", strerror(errno));
			return -1;
		}
	}
	srv->vshared = sh;
	return 0;
}

static struct ho_worker *state_of(struct worker *w)
{
	return w->vstate;
}

static void publish_open(struct worker *w)
{
	atomic_store_explicit(&state_of(w)->sh->pool.open[w->index], w->open_conns, memory_order_relaxed);
}

static int handoff_start(struct worker *w, char *err, size_t errlen)
{
	struct ho_shared *sh = w->srv->vshared;
	struct ho_worker *st = calloc(1, sizeof(*st));
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u64 = VARIANT_TAG };

	if (!st) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	st->sh = sh;
	w->vstate = st;
	publish_open(w);
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, sh->wake[w->index], &ev) < 0) {
		snprintf(err, errlen, "epoll_ctl(wake eventfd): %s", strerror(errno));
		return -1;
	}
	if (worker_bind_own_listener(w, err, errlen) < 0)
		return -1;
	return worker_watch_listener(w, EPOLLIN | EPOLLET, err, errlen);
}

static void admit(struct worker *w, int fd)
{
	worker_admit(w, fd);
	publish_open(w);
}

/* Takes what peers queued here and serves it. */
static void drain(struct worker *w)
{
	struct ho_worker *st = state_of(w);
	int fds[64], n;

	while ((n = handoff_queue_drain(&st->sh->pool.q[w->index], fds, 64)) > 0) {
		st->received += (uint64_t)n;
		for (int i = 0; i < n; i++)
			admit(w, fds[i]);
	}
}

static void wake(struct ho_shared *sh, int target)
{
	uint64_t one = 1;

	if (write(sh->wake[target], &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is saturated, so the target is awake anyway. */
	}
}

static void handoff_pass_woke(struct worker *w)
{
	drain(w);
}

static void handoff_fd_ready(struct worker *w)
{
	uint64_t v;

	if (read(state_of(w)->sh->wake[w->index], &v, sizeof(v)) < 0) {
		/* EAGAIN: already read */
	}
	drain(w);
}

static void handoff_readable(struct worker *w)
{
	struct ho_worker *st = state_of(w);
	struct handoff_pool *pool = &st->sh->pool;
	int fd;

	while ((fd = worker_accept_one(w, NULL)) >= 0) {
		int target = handoff_choose_target(pool, w->index, w->open_conns);

		if (target >= 0 && handoff_try(pool, target, fd)) {
			st->handed++;
			wake(st->sh, target);
			continue;
		}
		if (target >= 0)
			st->kept_refused++;
		admit(w, fd);
	}
}

static void handoff_conn_closed(struct worker *w)
{
	publish_open(w);
}

static void handoff_leaving(struct worker *w)
{
	struct ho_worker *st = state_of(w);
	struct handoff_pool *pool = &st->sh->pool;
	int fds[64], n;

	handoff_queue_close(&pool->q[w->index]);
	while ((n = handoff_queue_drain(&pool->q[w->index], fds, 64)) > 0) {
		for (int i = 0; i < n; i++) {
			int sent = 0;

			for (int k = 1; k < pool->num && !sent; k++) {
				int peer = (w->index + k) % pool->num;
				if (handoff_queue_push(&pool->q[peer], fds[i])) {
					wake(st->sh, peer);
					sent = 1;
				}
			}
			if (!sent)
				admit(w, fds[i]);
		}
	}
	emit_line(STDOUT_FILENO,
		  "{\"event\":\"handoff_exit\",\"index\":%d,\"handed\":%llu,\"received\":%llu,\"kept_refused\":%llu}",
		  w->index, (unsigned long long)st->handed, (unsigned long long)st->received,
		  (unsigned long long)st->kept_refused);
}

static int handoff_describe(struct worker *w, char *buf, size_t len)
{
	struct handoff_pool *pool = &state_of(w)->sh->pool;
	size_t off;

	off = (size_t)snprintf(buf, len,
			       "{\"variant\":\"handoff\",\"policy\":\"%s\",\"capacity\":%d,\"steal_threshold\":%d,"
			       "\"workers\":[",
			       handoff_policy_name(pool->policy), pool->capacity, pool->steal_threshold);
	for (int i = 0; i < pool->num && off < len; i++) {
		struct handoff_queue *q = &pool->q[i];

		pthread_mutex_lock(&q->mu);
		off += (size_t)snprintf(buf + off, len - off,
					"%s{\"index\":%d,\"open\":%d,\"queued\":%d,\"pushes\":%llu,\"pops\":%llu,"
					"\"refused\":%llu,\"closed\":%d}",
					i ? "," : "", i, atomic_load(&pool->open[i]), q->count,
					(unsigned long long)q->pushes, (unsigned long long)q->pops,
					(unsigned long long)q->refused, q->closed);
		pthread_mutex_unlock(&q->mu);
	}
	if (off < len)
		off += (size_t)snprintf(buf + off, len - off, "]}\n");
	return off < len ? (int)off : (int)len - 1;
}

const struct accept_variant variant_handoff = {
	.name = "handoff",
	.mechanism = "threads: per-thread SO_REUSEPORT listener + bounded hand-off queue per thread (seed 003)",
	.bind_per_worker = 1,
	.knobs = KNOB_HANDOFF,
	.modes = MODE_THREADS,
	.before_fork = handoff_before_fork,
	.worker_start = handoff_start,
	.pass_woke = handoff_pass_woke,
	.listener_readable = handoff_readable,
	.variant_fd_ready = handoff_fd_ready,
	.conn_closed = handoff_conn_closed,
	.leaving = handoff_leaving,
	.describe = handoff_describe,
};
