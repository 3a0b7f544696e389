/* mutex: nginx's accept_mutex, rebuilt on this harness.
 *
 * Plain arm (the default), as nginx's ngx_process_events_and_timers:
 *   - A token in a shared page made before fork (MAP_SHARED|MAP_ANONYMOUS,
 *     srv->vshared): one atomic word holding the holder's pid, or 0. Taken
 *     with a compare-and-swap, never waited for.
 *   - Every loop pass: if accept_disabled > 0, decrement it and do not try
 *     (the listener stays as it is: a worker whose last try succeeded keeps
 *     it, exactly as nginx's ngx_accept_mutex_held stays set). Otherwise
 *     try: on success the listener goes into this worker's epoll
 *     (level-triggered EPOLLIN, as nginx) and the worker is the holder; on
 *     failure the listener comes out if it was in, and the wait is capped at
 *     --accept-mutex-delay ms so the worker tries again that soon.
 *   - The holder keeps the token while it waits in epoll_wait. When the
 *     listener is readable it accepts ONE connection (multi_accept off) and
 *     recomputes accept_disabled = worker_connections/8 - free, where free =
 *     worker_connections - open connections (before the new one is counted,
 *     as nginx computes it before ngx_get_connection). The accepted socket is
 *     parked, not served: after_accepts releases the token first (nginx
 *     unlocks right after the posted accept events) and then admits the
 *     parked sockets, so a request's inline work (/sleep, /work) never runs
 *     under the token (nginx posts the new connection's read event for the
 *     same reason). The holder keeps the listener registered until its next
 *     failed try, as nginx does.
 *   - accept() failing with anything but EAGAIN (EMFILE and friends): the
 *     listener comes out, the token is released and accept_disabled = 1, as
 *     nginx's ngx_event_accept does.
 *   - A holder that dies holding the token: the supervisor, on reaping it,
 *     swaps the token from the dead pid to 0 (nginx's ngx_shmtx_force_unlock
 *     in ngx_process_get_status), so accepting resumes.
 *
 * Strict arm (--accept-mutex-strict), not in nginx: strict turns.
 *   - The page holds `turn` (the slot (server.h) whose turn it is), `turn_since_ns`
 *     (when it last changed) and a live mark per slot (the pid serving it,
 *     0 for none: a worker marks itself in worker_start, the supervisor
 *     clears it in worker_reaped). One eventfd per slot, made before fork,
 *     is that worker's poke.
 *   - The worker whose turn it is has the listener in its epoll; it accepts
 *     ONE connection, passes the turn to the next live slot (writing
 *     turn_since_ns before the turn itself, so nobody sees the new turn with
 *     an old timestamp), pokes that worker's eventfd and takes the listener
 *     out of its own epoll, all before the connection is served.
 *   - The others keep the listener out, wait on their eventfd (VARIANT_TAG)
 *     with the wait capped at the steal timeout, and take the listener when
 *     the turn is theirs.
 *   - Steal: a worker whose turn it is not, finding the turn unchanged for
 *     longer than STRICT_STEAL_MS and a connection waiting on the listener
 *     (poll with timeout 0; an idle server does not pass the turn around),
 *     takes the turn with a CAS. A former holder that wakes to a readable
 *     listener after losing its turn takes the listener out and does not
 *     accept.
 *   - A dead turn holder: the supervisor clears its live mark and moves the
 *     turn to the next live slot, poking it; the steal covers the rest.
 *   - The 1/8 rule (--worker-connections) is not applied in this arm.
 *
 * Test switch: env ACCEPTLAB_TEST_HOLD_TOKEN_MS=N (plain arm). The first time
 * a worker takes the token it prints
 *   {"event":"test_holding_token","index":I,"pid":P,"ms":N}
 * and then sleeps N ms while holding it, listener registered. It happens at
 * most once per worker and, through a flag in the shared page, at most once
 * per server run, so a survivor that takes the token after the holder is
 * killed does not stall as well. Tests use it to kill a holder mid-hold.
 */
#include "../server.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The steal timeout of the strict arm. A turn holder that is busy, for
 * example inside an inline view such as /sleep?ms=N, keeps the turn (it
 * passes it only when it accepts), and every connection that arrives
 * meanwhile waits until a sibling steals the turn. So this bounds the extra
 * wait a connection can suffer from a stuck holder. Too small and the turn
 * is stolen from holders that are only briefly busy (a scheduling hiccup, a
 * few ms of /work), which breaks the strict alternation the arm exists for;
 * too large and a slow view stalls new connections for that long. 100 ms is
 * well above normal per-request work and scheduling noise (sub-ms to a few
 * ms here) and well below the time a client notices as a hang. */
#define STRICT_STEAL_MS 100

#define HOLD_ENV "ACCEPTLAB_TEST_HOLD_TOKEN_MS"
#define PARKED_MAX 8

/* The knobs, with nginx's defaults. */
static struct {
	int delay_ms;           /* --accept-mutex-delay: a worker without the token waits this long */
	int strict;             /* --accept-mutex-strict: strict turns with a steal timeout */
	int worker_connections; /* --worker-connections: nginx's, for the 1/8 rule */
} mutex_knob = { 500, 0, 512 };

struct mutex_page {
	_Atomic int token;              /* plain: the holder's tid (its pid in process mode), or 0 */
	_Atomic int hold_used;          /* the test switch has been used in this run */
	_Atomic int turn;               /* strict: the slot whose turn it is */
	_Atomic long long turn_since_ns; /* strict: when the turn last changed */
	_Atomic int live[MAX_SLOTS];    /* strict: tid serving slot i (server.h), 0 none */
	int poke[MAX_SLOTS];            /* strict: eventfd per slot (read-only after fork) */
};

struct mutex_worker {
	int held;            /* nginx's ngx_accept_mutex_held: the last try won, listener in */
	int accept_disabled; /* nginx's ngx_accept_disabled */
	int hold_ms;         /* the test switch, 0 when unset */
	int held_once;       /* the knob already slept in this worker */
	int parked[PARKED_MAX]; /* accepted, to be admitted after the token is released */
	int nparked;
};

static struct mutex_page *page_of(const struct server *srv)
{
	return (struct mutex_page *)srv->vshared;
}

static struct mutex_worker *state_of(struct worker *w)
{
	return (struct mutex_worker *)w->vstate;
}

/* The page's memfd (--spawn-workers hands it to the exec'd workers). */
static int page_fd = -1;

static struct mutex_page *map_page(int fd, char *err, size_t errlen)
{
	struct mutex_page *pg = mmap(NULL, sizeof(*pg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (pg == MAP_FAILED) {
		snprintf(err, errlen, "mmap(shared page): %s", strerror(errno));
		return NULL;
	}
	return pg;
}

static int mutex_before_fork(struct server *srv, char *err, size_t errlen)
{
	struct mutex_page *pg;

	/* A memfd rather than an anonymous mapping: it survives an exec. */
	page_fd = memfd_create("acceptlab-mutex", MFD_CLOEXEC);
	if (page_fd < 0 || ftruncate(page_fd, sizeof(*pg)) < 0) {
		snprintf(err, errlen, "memfd for the shared page: %s", strerror(errno));
		return -1;
	}
	pg = map_page(page_fd, err, errlen);
	if (!pg)
		return -1;
	for (int i = 0; i < MAX_SLOTS; i++)
		pg->poke[i] = -1;
	atomic_store(&pg->turn_since_ns, (long long)now_ns());
	if (mutex_knob.strict) {
		for (int i = 0; i < srv->nslots; i++) {
			pg->poke[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
			if (pg->poke[i] < 0) {
				snprintf(err, errlen, "eventfd: %s", strerror(errno));
				return -1;
			}
		}
	}
	srv->vshared = pg;
	return 0;
}

/* ---- the token (plain arm) ---- */

static int token_trylock(struct mutex_page *pg, pid_t me)
{
	int expected = 0;

	/* Read first (as ngx_shmtx_trylock) so a busy token costs no locked op. */
	if (atomic_load_explicit(&pg->token, memory_order_relaxed) != 0)
		return 0;
	return atomic_compare_exchange_strong(&pg->token, &expected, (int)me);
}

/* Releases the token if this pid has it (a no-op otherwise, like
 * ngx_shmtx_unlock's compare-and-swap from its own pid). */
static void token_unlock(struct mutex_page *pg, pid_t me)
{
	int expected = (int)me;

	atomic_compare_exchange_strong(&pg->token, &expected, 0);
}

/* The test switch: sleep while holding the token, once per worker and once
 * per server run. */
static void maybe_test_hold(struct worker *w, struct mutex_worker *st, struct mutex_page *pg)
{
	int expected = 0;

	if (!st->hold_ms || st->held_once)
		return;
	st->held_once = 1;
	if (!atomic_compare_exchange_strong(&pg->hold_used, &expected, 1))
		return;
	emit_line(STDOUT_FILENO, "{\"event\":\"test_holding_token\",\"index\":%d,\"pid\":%d,\"ms\":%d}",
		  w->index, (int)w->pid, st->hold_ms);
	sleep_ms(st->hold_ms);
}

static int plain_pass_begin(struct worker *w, struct mutex_worker *st, struct mutex_page *pg)
{
	if (st->accept_disabled > 0) {
		st->accept_disabled--; /* too busy: do not try this pass */
		return -1;
	}
	if (token_trylock(pg, w->tid)) {
		if (!w->listener_watched && worker_listener_enable(w, EPOLLIN, 1) < 0) {
			token_unlock(pg, w->tid);
			return mutex_knob.delay_ms;
		}
		st->held = 1;
		maybe_test_hold(w, st, pg);
		return -1;
	}
	/* Somebody else holds it: take the listener out, try again soon. */
	worker_listener_enable(w, 0, 0);
	st->held = 0;
	return mutex_knob.delay_ms;
}

/* ---- turns (strict arm) ---- */

/* The next live slot after `from`, or `from` itself when no other is live. */
static int next_live(const struct mutex_page *pg, int from, int nworkers)
{
	for (int k = 1; k < nworkers; k++) {
		int j = (from + k) % nworkers;
		if (atomic_load(&pg->live[j]) != 0)
			return j;
	}
	return from;
}

static void poke(const struct mutex_page *pg, int index)
{
	uint64_t one = 1;

	if (pg->poke[index] >= 0 && write(pg->poke[index], &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, so the worker has pokes to read anyway. */
	}
}

/* Moves the turn from `from` to the next live slot and pokes it. Returns
 * the new holder, or -1 if the turn was no longer `from`'s. */
static int pass_turn(struct mutex_page *pg, int from, int nworkers)
{
	int next = next_live(pg, from, nworkers), expected = from;

	if (next == from)
		return from;
	atomic_store(&pg->turn_since_ns, (long long)now_ns());
	if (!atomic_compare_exchange_strong(&pg->turn, &expected, next))
		return -1;
	poke(pg, next);
	return next;
}

/* A connection is waiting in the listener's queue (no accept, no wait). */
static int listener_pending(const struct worker *w)
{
	struct pollfd p = { .fd = w->listen_fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

static int strict_pass_begin(struct worker *w, struct mutex_page *pg)
{
	int t = atomic_load(&pg->turn);
	int64_t age_ms;

	if (t == w->slot) {
		worker_listener_enable(w, EPOLLIN, 1);
		return -1;
	}
	worker_listener_enable(w, 0, 0);
	age_ms = (now_ns() - (int64_t)atomic_load(&pg->turn_since_ns)) / 1000000;
	if (age_ms < STRICT_STEAL_MS)
		return (int)(STRICT_STEAL_MS - age_ms);
	if (listener_pending(w)) {
		int expected = t;

		atomic_store(&pg->turn_since_ns, (long long)now_ns());
		if (atomic_compare_exchange_strong(&pg->turn, &expected, w->slot)) {
			worker_listener_enable(w, EPOLLIN, 1);
			return -1;
		}
	}
	return STRICT_STEAL_MS;
}

/* ---- hooks ---- */

static int mutex_start(struct worker *w, char *err, size_t errlen)
{
	struct mutex_page *pg = page_of(w->srv);
	struct mutex_worker *st = calloc(1, sizeof(*st));
	const char *hold = getenv(HOLD_ENV);

	if (!st) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (hold && *hold)
		st->hold_ms = atoi(hold) > 0 ? atoi(hold) : 0;
	w->vstate = st;
	/* nginx adds no listener at process start when accept_mutex is on: the
	 * first pass's try does. */
	if (mutex_knob.strict) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = VARIANT_TAG };

		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, pg->poke[w->slot], &ev) < 0) {
			snprintf(err, errlen, "epoll_ctl(poke eventfd): %s", strerror(errno));
			return -1;
		}
		atomic_store(&pg->live[w->slot], (int)w->tid);
	}
	return 0;
}

static int mutex_pass_begin(struct worker *w)
{
	if (mutex_knob.strict)
		return strict_pass_begin(w, page_of(w->srv));
	return plain_pass_begin(w, state_of(w), page_of(w->srv));
}

static void park(struct worker *w, struct mutex_worker *st, int fd)
{
	if (st->nparked < PARKED_MAX)
		st->parked[st->nparked++] = fd;
	else
		worker_admit(w, fd); /* cannot happen: one accept per listener event */
}

static void mutex_listener_readable(struct worker *w)
{
	struct mutex_worker *st = state_of(w);
	struct mutex_page *pg = page_of(w->srv);
	int fd, wc = mutex_knob.worker_connections;
	enum accept_result r;

	if (mutex_knob.strict) {
		if (atomic_load(&pg->turn) != w->slot) {
			worker_listener_enable(w, 0, 0); /* the turn was stolen or passed */
			return;
		}
		r = worker_accept(w, NULL, &fd);
		if (r == ACCEPT_AGAIN)
			return; /* nothing there after all: keep the turn */
		/* Accepted (or accept is failing here): the turn moves on before
		 * the connection is served. */
		if (pass_turn(pg, w->slot, w->srv->nslots) != w->slot)
			worker_listener_enable(w, 0, 0);
		if (r == ACCEPT_OK)
			park(w, st, fd);
		return;
	}

	r = worker_accept(w, NULL, &fd);
	if (r == ACCEPT_OK) {
		/* nginx: connection_n / 8 - free_connection_n, before this one is counted. */
		st->accept_disabled = wc / 8 - (wc - w->open_conns);
		park(w, st, fd);
	} else if (r != ACCEPT_AGAIN) {
		/* EMFILE and friends: stop accepting here for a while (nginx). */
		worker_listener_enable(w, 0, 0);
		token_unlock(pg, w->tid);
		st->held = 0;
		st->accept_disabled = 1;
	}
}

static void mutex_variant_fd_ready(struct worker *w)
{
	struct mutex_page *pg = page_of(w->srv);
	uint64_t n;

	/* The poke: drain it; the next pass_begin takes the listener if the
	 * turn is (still) ours. */
	if (read(pg->poke[w->slot], &n, sizeof(n)) < 0) {
		/* EAGAIN: already drained */
	}
}

static void mutex_after_accepts(struct worker *w)
{
	struct mutex_worker *st = state_of(w);

	if (!mutex_knob.strict && st->held)
		token_unlock(page_of(w->srv), w->tid);
	for (int i = 0; i < st->nparked; i++)
		worker_admit(w, st->parked[i]);
	st->nparked = 0;
}

static void mutex_leaving(struct worker *w)
{
	struct mutex_worker *st = state_of(w);
	struct mutex_page *pg = page_of(w->srv);

	if (mutex_knob.strict) {
		int me = (int)w->tid;

		/* Only our own mark: the slot may already be a successor's. */
		atomic_compare_exchange_strong(&pg->live[w->slot], &me, 0);
		if (atomic_load(&pg->turn) == w->slot)
			pass_turn(pg, w->slot, w->srv->nslots);
		return;
	}
	if (st && st->held) {
		token_unlock(pg, w->tid);
		st->held = 0;
	}
}

/* Supervisor: the worker (pid) in slot was reaped. */
static void mutex_worker_reaped(struct server *srv, int slot, pid_t pid)
{
	struct mutex_page *pg = page_of(srv);
	int expected = (int)pid;

	if (!pg)
		return;
	/* nginx's ngx_shmtx_force_unlock: only if the dead pid still has it. */
	atomic_compare_exchange_strong(&pg->token, &expected, 0);
	if (mutex_knob.strict) {
		expected = (int)pid;
		atomic_compare_exchange_strong(&pg->live[slot], &expected, 0);
		if (atomic_load(&pg->turn) == slot)
			pass_turn(pg, slot, srv->nslots);
	}
}

/* --spawn-workers: the page's memfd, then the strict arm's eventfds (their
 * numbers are in the page already; they must only stay open). */
static int mutex_spawn_fds(const struct server *srv, int *fds, int max)
{
	const struct mutex_page *pg = page_of(srv);
	int n = 0;

	fds[n++] = page_fd;
	for (int i = 0; i < srv->nslots && n < max; i++)
		if (pg->poke[i] >= 0)
			fds[n++] = pg->poke[i];
	return n;
}

static int mutex_spawn_import(struct server *srv, const int *fds, int n, char *err, size_t errlen)
{
	if (n < 1) {
		snprintf(err, errlen, "no shared page inherited");
		return -1;
	}
	page_fd = fds[0];
	srv->vshared = map_page(page_fd, err, errlen);
	return srv->vshared ? 0 : -1;
}

/* ---- the knobs ---- */

static int parse_delay(const char *value, char *err, size_t errlen)
{
	return knob_parse_int("--accept-mutex-delay", value, 0, 60000, &mutex_knob.delay_ms, err, errlen);
}

static int parse_worker_connections(const char *value, char *err, size_t errlen)
{
	return knob_parse_int("--worker-connections", value, 8, 1000000, &mutex_knob.worker_connections, err,
			      errlen);
}

static const struct knob mutex_options[] = {
	{ .name = "--accept-mutex-delay", .arg = "MS",
	  .help = "  --accept-mutex-delay MS  mutex: how long a worker without the token waits\n"
		  "                        before trying again (default 500, as nginx)\n",
	  .parse = parse_delay },
	{ .name = "--accept-mutex-strict",
	  .help = "  --accept-mutex-strict mutex: strict turns (release after one accept, pass the\n"
		  "                        turn to the next worker, steal after a timeout)\n",
	  .flag = &mutex_knob.strict },
	{ .name = "--worker-connections", .arg = "N",
	  .help = "  --worker-connections N  mutex: nginx's worker_connections for the 1/8 rule\n"
		  "                        (default 512)\n",
	  .parse = parse_worker_connections },
	{ .name = NULL },
};

const struct knob_set mutex_knobs = { .knobs = mutex_options };

const struct accept_variant variant_mutex = {
	.name = "mutex",
	.mechanism = "nginx's `accept_mutex`: a token in a shared page; only the holder has the listener "
		     "in its epoll, the others retry after `--accept-mutex-delay`; `--accept-mutex-strict` "
		     "makes it strict turns",
	.knob_sets = { &mutex_knobs },
	.before_fork = mutex_before_fork,
	.worker_start = mutex_start,
	.pass_begin = mutex_pass_begin,
	.listener_readable = mutex_listener_readable,
	.variant_fd_ready = mutex_variant_fd_ready,
	.after_accepts = mutex_after_accepts,
	.leaving = mutex_leaving,
	.worker_reaped = mutex_worker_reaped,
	.spawn_fds = mutex_spawn_fds,
	.spawn_import = mutex_spawn_import,
};
