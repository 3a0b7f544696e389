/* handoff: per-thread SO_REUSEPORT listeners, plus a user-level hand-off of
 * new connections between threads (the hand-off design note, seed 003).
 * Threads mode only: the queue moves descriptor numbers, which mean the same
 * connection only inside one process.
 *
 * The parts:
 *  - Each thread binds its own SO_REUSEPORT listener (the kernel's 4-tuple
 *    hash picks the thread, as in reuseport) and accepts until EAGAIN.
 *  - One bounded queue per thread (conn_queue.c: a ring under a pthread mutex
 *    that refuses when full and never blocks) and one eventfd per thread to
 *    wake it (VARIANT_TAG, edge-triggered).
 *  - Loads (load.h, one accounting for every balancing variant): a thread's
 *    load is the connections it holds whose peer has not closed them (with
 *    BPF the kernel uncounts one the moment it leaves ESTABLISHED), plus
 *    those queued to it, counted before the push.
 *  - For each accepted connection the policy (--handoff-policy) picks a
 *    target with handoff_choose_target(local thread, its load):
 *      written: the note's rule as written: the peer with the shortest
 *               queue, when the local load exceeds that queue's depth by
 *               --steal-threshold;
 *      open:    the same, with the peer's load taken as the server counts it
 *               (load.h) instead of its queue alone (the corrected arm);
 *      off:     never (plain reuseport, the knob-off arm).
 *    A refused push (full or closed queue) keeps the connection here.
 *  - The owner drains its queue at the top of every loop pass and whenever
 *    its eventfd fires (read the eventfd first, then drain, so a push that
 *    lands after the drain also leaves the eventfd set), counting each
 *    connection as its own (load_admit) and admitting it through the accept
 *    path's tail (worker_admit).
 *  - Each thread also publishes its open-connection count in the pool after
 *    every admit and close (GET /variant shows it).
 *  - Leaving: the queue is closed (later pushes refuse), then what is queued
 *    is pushed to a peer that has not left, or admitted here when none is.
 */
#include "../server.h"
#include "../conn_queue.h"
#include "../load.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct ho_shared {
	struct conn_queue_pool pool;
	struct load_account *load;
	int wake[MAX_WORKERS];
};

struct ho_worker {
	struct ho_shared *sh;
	uint64_t handed, received, kept_refused;
};

static struct ho_shared the_shared;

/* The knobs and their defaults (the help text below says them). */
static struct {
	enum handoff_policy policy; /* --handoff-policy */
	int capacity;               /* --handoff-capacity: slots in each thread's queue */
	int steal_threshold;        /* --steal-threshold: hand off when the local load exceeds the peer's by this */
} handoff_knob = { HANDOFF_OPEN, 64, 1 };

/* The pool's view of a thread's load (threads mode: slot = index). */
static int64_t thread_load(void *ctx, int worker)
{
	return load_of(ctx, worker);
}

static int handoff_before_fork(struct server *srv, char *err, size_t errlen)
{
	struct ho_shared *sh = &the_shared;

	if (conn_queue_pool_init(&sh->pool, srv->cfg.workers, handoff_knob.policy, handoff_knob.capacity,
			      handoff_knob.steal_threshold) < 0) {
		snprintf(err, errlen, "handoff pool: %s", strerror(errno));
		return -1;
	}
	sh->load = load_open(srv, 0, err, errlen);
	if (!sh->load)
		return -1;
	if (load_note(sh->load))
		fprintf(stderr, "acceptlab-server: --variant %s: %s; counting load in user space\n", srv->cfg.variant->name,
			load_note(sh->load));
	sh->pool.load = thread_load;
	sh->pool.load_ctx = sh->load;
	srv->accounting = load_accounting(sh->load);
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

/* fd, credited to w, is w's to serve. */
static void admit(struct worker *w, int fd)
{
	struct load_account *la = state_of(w)->sh->load;

	load_admit(la, w->index, fd);
	if (worker_admit(w, fd) < 0)
		load_closed(la, w->index); /* closed unserved */
	publish_open(w);
}

/* Takes what peers queued here and serves it. */
static void drain(struct worker *w)
{
	struct ho_worker *st = state_of(w);
	int fds[64], n;

	while ((n = conn_queue_drain(&st->sh->pool.q[w->index], fds, 64)) > 0) {
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

/* Queues fd for target, credited to it first; 1 if it went, 0 (credit back) if refused. */
static int give(struct ho_shared *sh, int target, int fd)
{
	load_credit(sh->load, target, 1);
	if (handoff_try(&sh->pool, target, fd)) {
		wake(sh, target);
		return 1;
	}
	load_credit(sh->load, target, -1);
	return 0;
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
	struct conn_queue_pool *pool = &st->sh->pool;
	int fd;

	while ((fd = worker_accept_one(w, NULL)) >= 0) {
		int64_t mine = load_of(st->sh->load, w->index);
		int target = handoff_choose_target(pool, w->index, mine > 1000000000 ? 1000000000 : (int)mine);

		if (target >= 0 && give(st->sh, target, fd)) {
			st->handed++;
			continue;
		}
		if (target >= 0)
			st->kept_refused++;
		load_credit(st->sh->load, w->index, 1);
		admit(w, fd);
	}
}

static void handoff_conn_closed(struct worker *w)
{
	load_closed(state_of(w)->sh->load, w->index);
	publish_open(w);
}

static void handoff_leaving(struct worker *w)
{
	struct ho_worker *st = state_of(w);
	struct conn_queue_pool *pool = &st->sh->pool;
	int fds[64], n;

	conn_queue_close(&pool->q[w->index]);
	while ((n = conn_queue_drain(&pool->q[w->index], fds, 64)) > 0) {
		for (int i = 0; i < n; i++) {
			int sent = 0;

			for (int k = 1; k < pool->num && !sent; k++) {
				int peer = (w->index + k) % pool->num;

				load_credit(st->sh->load, peer, 1);
				if (conn_queue_push(&pool->q[peer], fds[i])) {
					load_credit(st->sh->load, w->index, -1); /* the peer's now */
					wake(st->sh, peer);
					sent = 1;
				} else {
					load_credit(st->sh->load, peer, -1);
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

/* A thread's queue, for GET /variant (threads mode: slot = index). */
static int queue_members(void *ctx, int slot, char *buf, size_t len)
{
	struct conn_queue_pool *pool = ctx;
	struct conn_queue *q = &pool->q[slot];
	int n;

	pthread_mutex_lock(&q->mu);
	n = snprintf(buf, len, "\"open\":%d,\"queued\":%d,\"pushes\":%llu,\"pops\":%llu,\"refused\":%llu,"
		     "\"closed\":%d,", atomic_load(&pool->open[slot]), q->count, (unsigned long long)q->pushes,
		     (unsigned long long)q->pops, (unsigned long long)q->refused, q->closed);
	pthread_mutex_unlock(&q->mu);
	return n < 0 ? 0 : (size_t)n < len ? n : (int)len - 1;
}

static int handoff_describe(struct worker *w, char *buf, size_t len)
{
	struct ho_shared *sh = state_of(w)->sh;
	struct conn_queue_pool *pool = &sh->pool;
	size_t off;

	off = (size_t)snprintf(buf, len,
			       "{\"variant\":\"handoff\",\"policy\":\"%s\",\"capacity\":%d,\"steal_threshold\":%d,"
			       "\"worker\":%d,\"slot\":%d,",
			       handoff_policy_name(pool->policy), pool->capacity, pool->steal_threshold, w->index, w->slot);
	if (off < len)
		off += (size_t)load_describe(sh->load, pool->num, pool->num, queue_members, pool, buf + off, len - off);
	if (off < len)
		off += (size_t)snprintf(buf + off, len - off, "}\n");
	return off < len ? (int)off : (int)len - 1;
}

/* ---- the knobs ---- */

static int parse_policy(const char *value, char *err, size_t errlen)
{
	if (handoff_policy_parse(value, &handoff_knob.policy) < 0) {
		snprintf(err, errlen, "--handoff-policy %s: expected written, open or off", value);
		return -1;
	}
	return 0;
}

static int parse_capacity(const char *value, char *err, size_t errlen)
{
	return knob_parse_int("--handoff-capacity", value, 1, 65536, &handoff_knob.capacity, err, errlen);
}

static int parse_steal_threshold(const char *value, char *err, size_t errlen)
{
	return knob_parse_int("--steal-threshold", value, 1, 1000000, &handoff_knob.steal_threshold, err, errlen);
}

static const struct knob handoff_options[] = {
	{ .name = "--handoff-policy", .arg = "P",
	  .help = "  --handoff-policy P    handoff: written (the note's rule: local load against\n"
		  "                        the idlest peer's queue depth), open (against the\n"
		  "                        peer's open connections plus queue), or off (plain\n"
		  "                        reuseport, the knob-off arm); default open\n",
	  .parse = parse_policy },
	{ .name = "--handoff-capacity", .arg = "N",
	  .help = "  --handoff-capacity N  handoff: slots in each thread's queue (default 64)\n",
	  .parse = parse_capacity },
	{ .name = "--steal-threshold", .arg = "N",
	  .help = "  --steal-threshold N   handoff: hand off when the local load exceeds the\n"
		  "                        peer's by at least N (default 1)\n",
	  .parse = parse_steal_threshold },
	{ .name = NULL },
};

const struct knob_set handoff_knobs = { .knobs = handoff_options };

const struct accept_variant variant_handoff = {
	.name = "handoff",
	.mechanism = "threads mode only (the hand-off design note, seed 003): per-thread `SO_REUSEPORT` "
		     "listeners, and a bounded queue per thread that peers push new connections into; "
		     "`--handoff-policy written|open|off`",
	.bind_per_worker = 1,
	.knob_sets = { &handoff_knobs },
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
