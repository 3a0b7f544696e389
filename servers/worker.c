/* worker.c: one worker's event loop, from its start to its stop. Each pass
 * waits, runs the variant's accept phase (server.h's hooks, which call the
 * accept path, accept.c), the first reads of what it admitted, then serves
 * the connections' events (conn.c), and sweeps timeouts now and then. How
 * the connections are registered with epoll is the connection set's
 * (conn.h): the worker's own epoll (own_epoll.c) unless a knob installed
 * another (shared_epoll.c). Calls go one way: this file calls accept.c,
 * conn.c and the set; none of them calls back here. */
#include "conn.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define SWEEP_INTERVAL_MS 1000
#define STOP_DRAIN_MS 5000            /* after SIGTERM, in-flight requests get this long */
/* The sweep's interval while retiring for a reload: a retiring worker
 * closes a keep-alive connection idle for a second (conn.c's
 * RETIRE_IDLE_MS), so it looks more often. */
#define RETIRE_SWEEP_MS 100

/* Set by the stop signal: SIGTERM from the supervisor in process mode,
 * SIGUSR1 from the main thread (pthread_kill, one per thread) in threads
 * mode. Either way it is unblocked only inside epoll_pwait (and inside a
 * blocking variant's accept(): worker_accept_blocking). */
static volatile sig_atomic_t stop_requested;
/* Set by RETIRE_SIGNAL (process mode): the supervisor's reload replaces this
 * worker; stop taking connections and let the open ones finish gently. */
static volatile sig_atomic_t retire_requested;

static void on_stop_signal(int sig)
{
	if (sig == RETIRE_SIGNAL)
		retire_requested = 1;
	else
		stop_requested = 1;
}

/* The signal mask a worker waits with: the one it runs with (the stop
 * signals blocked), less its stop signals. */
static void wait_mask(const struct worker *w, sigset_t *mask)
{
	pthread_sigmask(SIG_BLOCK, NULL, mask);
	sigdelset(mask, w->srv->cfg.threads ? SIGUSR1 : SIGTERM);
	if (!w->srv->cfg.threads)
		sigdelset(mask, RETIRE_SIGNAL);
}

int worker_accept_blocking(struct worker *w)
{
	sigset_t waiting, saved;
	int fd = -1;

	wait_mask(w, &waiting);
	/* A stop signal already pending is delivered as the mask opens (its
	 * handler has run when pthread_sigmask returns): then no wait. The
	 * handler is installed without SA_RESTART, so one that comes during
	 * the wait ends accept() with EINTR. */
	pthread_sigmask(SIG_SETMASK, &waiting, &saved);
	if (!stop_requested && !retire_requested)
		fd = worker_accept_one(w, NULL);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	return fd;
}

int worker_pin(const struct server *srv, int i, char *err, size_t errlen)
{
	cpu_set_t set;
	int cpu;

	if (!srv->cfg.npin)
		return 0;
	cpu = srv->cfg.pin_cpus[i % srv->cfg.npin];
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* pid 0: the calling thread only, in either mode. */
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		snprintf(err, errlen, "pin to CPU %d: %s", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- the stop and the loop ---- */

/* SIGTERM: take no more connections, close idle ones, finish the rest.
 * retire (RETIRE_SIGNAL, a reload): the same, except that idle connections
 * stay open for their next request (conn.c: RETIRE_IDLE_MS). A SIGTERM while
 * retiring turns the retirement into a stop. */
static void worker_begin_stop(struct worker *w, int retire)
{
	if (!w->stopping) {
		w->stopping = 1;
		if (w->listen_fd >= 0)
			worker_listener_enable(w, 0, 0);
		if (w->srv->cfg.variant->bind_per_worker && w->listen_fd >= 0) {
			close(w->listen_fd); /* leave the reuseport group: no new connections here */
			w->listen_fd = -1;
		}
		if (w->srv->cfg.variant->leaving)
			w->srv->cfg.variant->leaving(w);
	}
	conn_admit_flush(w); /* what leaving admitted is answered, not closed unread below */
	w->retiring = retire;
	w->conn_set->stop(w, retire);
}

/* ACCEPTLAB_TEST_ARM_GAP_MS=INDEX:MS holds worker INDEX for MS ms after it
 * is ready and before its loop starts (a slow application import), so
 * tests can see what siblings do with a worker that has not started.
 * Returns the hold for w in ms (0: none). */
static int test_hold_ms(const struct worker *w)
{
	const char *s = getenv("ACCEPTLAB_TEST_ARM_GAP_MS");
	int index, ms;
	char tail;

	if (!s)
		return 0;
	if (sscanf(s, "%d:%d%c", &index, &ms, &tail) != 2 || index < 0 || ms < 0 || ms > 600000) {
		fprintf(stderr, "acceptlab-server: ACCEPTLAB_TEST_ARM_GAP_MS=%s: expected INDEX:MS\n", s);
		_exit(2);
	}
	return index == w->index ? ms : 0;
}

int worker_run(struct worker *w)
{
	const struct accept_variant *v = w->srv->cfg.variant;
	const struct conn_set *cs;
	struct epoll_event evs[256];
	struct sigaction sa;
	sigset_t during_wait;
	char err[ERRLEN];
	int64_t next_sweep, stop_deadline = 0;
	int hold_ms;
	int stop_sig = w->srv->cfg.threads ? SIGUSR1 : SIGTERM;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal; /* no SA_RESTART: a blocking accept() ends with EINTR */
	sigaction(stop_sig, &sa, NULL);
	if (!w->srv->cfg.threads)
		sigaction(RETIRE_SIGNAL, &sa, NULL);
	/* The stop signals stay blocked except inside epoll_pwait (and a
	 * blocking variant's accept, worker_accept_blocking), so a request in
	 * progress (even /sleep) finishes before the stop is seen. The
	 * supervisor blocks them before the fork. */
	wait_mask(w, &during_wait);

	cs = w->conn_set = w->srv->conn_set ? w->srv->conn_set : &own_epoll_conns;
	if (cs->open(w) < 0) {
		fprintf(stderr, "acceptlab-server: worker %d: epoll_create1: %s\n", w->index, strerror(errno));
		return 1;
	}
	/* Test switch: ACCEPTLAB_TEST_FAIL_SLOT=S makes a worker in slot S fail
	 * before it serves (a reload's new worker that cannot start). */
	if (!w->srv->cfg.threads && env_long("ACCEPTLAB_TEST_FAIL_SLOT", -1, -1, MAX_SLOTS - 1) == w->slot) {
		fprintf(stderr, "acceptlab-server: worker %d: failing in slot %d (ACCEPTLAB_TEST_FAIL_SLOT)\n",
			w->index, w->slot);
		return 1;
	}
	if (v->worker_start(w, err, sizeof(err)) < 0) {
		fprintf(stderr, "acceptlab-server: worker %d: %s\n", w->index, err);
		return 1;
	}
	/* The worker serves from here: its loop runs next. A variant learns it
	 * before the ready record, so a burst sent the moment the server says
	 * ready finds every worker a candidate; with the test hold it learns
	 * it only after the hold (a worker that said ready but has not started). */
	hold_ms = test_hold_ms(w);
	if (!hold_ms && v->serving)
		v->serving(w);
	if (w->ready_fd >= 0) {
		struct worker_ready r = { .index = w->index, .slot = w->slot, .pid = w->pid, .tid = w->tid };
		format_affinity(r.cpu, sizeof(r.cpu));
		if (write(w->ready_fd, &r, sizeof(r)) != sizeof(r))
			return 1; /* the supervisor is gone */
	}
	if (hold_ms) {
		sleep_ms(hold_ms);
		if (v->serving)
			v->serving(w);
	}

	w->clock_ns = now_ns();
	next_sweep = w->clock_ns + (int64_t)SWEEP_INTERVAL_MS * 1000000;
	for (;;) {
		int timeout = w->retiring ? RETIRE_SWEEP_MS : SWEEP_INTERVAL_MS, n;
		int64_t now;

		if (w->accept_paused_until) {
			int64_t left = w->accept_paused_until - now_ns();
			if (left <= 0)
				accept_resume(w);
			else if (left / 1000000 + 1 < timeout)
				timeout = (int)(left / 1000000) + 1;
		}
		if (v->pass_begin && !w->stopping) {
			int cap = v->pass_begin(w);
			if (cap >= 0 && cap < timeout)
				timeout = cap;
		}
		n = epoll_pwait(w->epfd, evs, 256, timeout, &during_wait);
		w->clock_ns = now_ns();
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "acceptlab-server: worker %d: epoll_pwait: %s\n", w->index, strerror(errno));
			return 1;
		}
		if (n > 0) /* a wakeup with work: a timeout's or a signal's return is not one */
			w->epoll_returns++;
		if (v->pass_woke)
			v->pass_woke(w);
		if ((stop_requested && (!w->stopping || w->retiring)) || (retire_requested && !w->stopping)) {
			if (!w->stopping)
				stop_deadline = now_ns() + (int64_t)STOP_DRAIN_MS * 1000000;
			worker_begin_stop(w, !stop_requested);
		}
		/* The accept phase first (as nginx handles posted accept events
		 * before the others), then the variant's after_accepts, then the
		 * connections. */
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;

			if (tag == LISTENER_TAG && !w->stopping && v->listener_readable)
				v->listener_readable(w);
			else if (tag == VARIANT_TAG)
				v->variant_fd_ready(w);
		}
		if (v->after_accepts)
			v->after_accepts(w);
		conn_admit_flush(w); /* every admit of the pass so far: pass_woke, accept phase, after_accepts */
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;
			struct conn *c;

			if (tag == LISTENER_TAG || tag == VARIANT_TAG)
				continue;
			c = (int)tag < w->nconns_cap ? w->conns[(int)tag] : NULL;
			if (!c)
				continue; /* closed earlier in this pass */
			if (conn_serve(w, c, evs[i].events) == 0)
				cs->rearm(w, c);
		}
		if (v->pass_end)
			v->pass_end(w);

		now = now_ns();
		if (now >= next_sweep) {
			cs->sweep(w, now);
			next_sweep = now + (int64_t)(w->retiring ? RETIRE_SWEEP_MS : SWEEP_INTERVAL_MS) * 1000000;
		}
		if (w->stopping && (now >= stop_deadline || cs->open_count(w) == 0))
			break;
	}
	emit_line(STDOUT_FILENO,
		  "{\"event\":\"worker_exit\",\"index\":%d,\"slot\":%d,\"pid\":%d,\"tid\":%d,\"retired\":%s,"
		  "\"accepted\":%llu,\"admitted\":%llu,\"requests\":%llu,\"epoll_returns\":%llu,"
		  "\"accept_eagain\":%llu,\"accept_errors\":%llu}",
		  w->index, w->slot, (int)w->pid, (int)w->tid, w->retiring ? "true" : "false",
		  (unsigned long long)w->accepted,
		  (unsigned long long)w->admitted, (unsigned long long)w->requests,
		  (unsigned long long)w->epoll_returns,
		  (unsigned long long)w->accept_eagain, (unsigned long long)w->accept_errors);
	conn_release_memory(w);
	return 0;
}
