/* test_conn_queue.c: unit tests for the connection queues and the hand-off
 * policy in servers/conn_queue.c.
 *
 * What they expect: a queue never blocks a producer (a full or closed queue
 * refuses and counts it), hands tokens out in FIFO order however often its
 * indices wrap, and under many concurrent producers loses, duplicates and
 * reorders nothing; the policy keeps a connection unless the idlest peer is
 * lighter by at least the threshold, where "lighter" is queue depth alone as
 * the design note wrote it (WRITTEN) or open connections plus queue depth
 * (OPEN).
 *
 * No framework: each CHECK counts a pass or prints a failure naming its case,
 * and the last line is "N passed, N failed in N cases" (exit 1 if any failed;
 * check.h's RUN counts each case, and one that ran no check fails). Built
 * twice: under ASan/UBSan (build/test_conn_queue) and under TSan
 * (build/test_conn_queue_tsan), where the threaded cases are what count. An
 * alarm kills the program if anything blocks.
 */
#include "conn_queue.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* Under TSan everything runs several times slower; this is far above either. */
#define WATCHDOG_SECONDS 100

/* ---- single-threaded queue behaviour ----------------------------------- */

static void test_init_rejects_bad_capacity(void)
{
	struct conn_queue q;
	int r;

	errno = 0;
	r = conn_queue_init(&q, 0);
	CHECK(r == -1 && errno == EINVAL, "capacity 0: got %d errno %d, want -1 EINVAL", r, errno);
	errno = 0;
	r = conn_queue_init(&q, -5);
	CHECK(r == -1 && errno == EINVAL, "capacity -5: got %d errno %d, want -1 EINVAL", r, errno);

	/* capacity 1 is the smallest useful queue: one token, then refuse. */
	r = conn_queue_init(&q, 1);
	CHECK(r == 0, "capacity 1: init %d, want 0", r);
	if (r == 0) {
		CHECK(conn_queue_push(&q, 7) == 1, "capacity 1: first push queues");
		CHECK(conn_queue_push(&q, 8) == 0, "capacity 1: second push refused (full)");
		conn_queue_destroy(&q);
		conn_queue_destroy(&q); /* documented as harmless */
	}
}

static void test_full_queue_refuses_without_blocking(void)
{
	struct conn_queue q;
	int i, tok, refusals = 0;

	if (conn_queue_init(&q, 4) != 0) {
		CHECK(0, "full queue: init failed: %s", strerror(errno));
		return;
	}
	for (i = 0; i < 4; i++)
		CHECK(conn_queue_push(&q, 100 + i) == 1, "full queue: push %d of 4 queues", i);
	CHECK(q.refused == 0, "full queue: nothing refused while there was room (%llu)",
	      (unsigned long long)q.refused);

	/* A push into a full queue must return at once: if it waited for room,
	 * this single thread would never get to pop, and the alarm would fire. */
	for (i = 0; i < 1000; i++)
		refusals += conn_queue_push(&q, 999) == 0;
	CHECK(refusals == 1000, "full queue: %d of 1000 pushes refused, want all", refusals);
	CHECK(q.refused == 1000, "full queue: refused counter %llu, want 1000",
	      (unsigned long long)q.refused);
	CHECK(q.pushes == 4, "full queue: pushes %llu, want 4 (refusals are not pushes)",
	      (unsigned long long)q.pushes);
	CHECK(conn_queue_size(&q) == 4, "full queue: size %d, want 4", conn_queue_size(&q));

	/* The refused token did not overwrite anything: the four are intact. */
	for (i = 0; i < 4; i++) {
		int ok = conn_queue_pop(&q, &tok);
		CHECK(ok == 1 && tok == 100 + i, "full queue: pop %d got %d/%d, want 1/%d", i, ok, tok,
		      100 + i);
	}
	CHECK(conn_queue_pop(&q, &tok) == 0, "full queue: empty after four pops");
	/* Room again: a push is accepted. */
	CHECK(conn_queue_push(&q, 5) == 1, "full queue: push accepted once there is room");
	conn_queue_destroy(&q);
}

static void test_closed_queue_refuses_but_keeps_tokens(void)
{
	struct conn_queue q;
	int out[8], n;

	if (conn_queue_init(&q, 8) != 0) {
		CHECK(0, "closed queue: init failed: %s", strerror(errno));
		return;
	}
	conn_queue_push(&q, 1);
	conn_queue_push(&q, 2);
	conn_queue_close(&q);
	/* A closing worker must stop receiving connections it will never serve,
	 * even though its queue has room. */
	CHECK(conn_queue_push(&q, 3) == 0, "closed queue: push refused despite room");
	CHECK(q.refused == 1, "closed queue: refusal counted (%llu)", (unsigned long long)q.refused);
	CHECK(conn_queue_size(&q) == 2, "closed queue: size %d, want the 2 queued before close",
	      conn_queue_size(&q));
	/* What was queued before close stays, so it can be drained and closed. */
	n = conn_queue_drain(&q, out, 8);
	CHECK(n == 2 && out[0] == 1 && out[1] == 2, "closed queue: drain got %d tokens, want 1,2", n);
	CHECK(conn_queue_push(&q, 4) == 0, "closed queue: still refuses once empty");
	conn_queue_destroy(&q);
}

static void test_fifo_across_wraparound(void)
{
	struct conn_queue q;
	int next_in = 0, next_out = 0, tok, round, i, bad = 0;

	/* An odd capacity so head and tail wrap at different phases. */
	if (conn_queue_init(&q, 7) != 0) {
		CHECK(0, "wrap-around: init failed: %s", strerror(errno));
		return;
	}
	/* Push 3, pop 2 until nearly full, then drain: 1000 rounds move
	 * thousands of tokens through 7 slots, wrapping hundreds of times. */
	for (round = 0; round < 1000; round++) {
		for (i = 0; i < 3; i++) {
			if (conn_queue_push(&q, next_in) == 1)
				next_in++;
		}
		for (i = 0; i < 2; i++) {
			if (conn_queue_pop(&q, &tok) == 1) {
				bad += tok != next_out;
				next_out = tok + 1;
			}
		}
		if (conn_queue_size(&q) >= 6) {
			while (conn_queue_pop(&q, &tok) == 1) {
				bad += tok != next_out;
				next_out = tok + 1;
			}
		}
	}
	while (conn_queue_pop(&q, &tok) == 1) {
		bad += tok != next_out;
		next_out = tok + 1;
	}
	CHECK(next_in > 10 * 7, "wrap-around: moved %d tokens, want many more than capacity", next_in);
	CHECK(bad == 0, "wrap-around: %d tokens out of order", bad);
	CHECK(next_out == next_in, "wrap-around: popped through %d, pushed %d (lost tokens)", next_out,
	      next_in);
	CHECK(q.pushes == (uint64_t)next_in && q.pops == (uint64_t)next_in,
	      "wrap-around: pushes %llu pops %llu, want %d each", (unsigned long long)q.pushes,
	      (unsigned long long)q.pops, next_in);

	/* Full at an arbitrary wrap phase: every slot is usable, order holds. */
	for (i = 0; i < 3; i++)
		conn_queue_push(&q, -1);
	for (i = 0; i < 3; i++)
		conn_queue_pop(&q, &tok);
	for (i = 0; i < 7; i++)
		CHECK(conn_queue_push(&q, 500 + i) == 1, "wrap-around: slot %d of 7 usable", i);
	CHECK(conn_queue_push(&q, 0) == 0, "wrap-around: eighth push refused");
	for (i = 0; i < 7; i++) {
		int ok = conn_queue_pop(&q, &tok);
		CHECK(ok == 1 && tok == 500 + i, "wrap-around: full-then-pop %d got %d, want %d", i, tok,
		      500 + i);
	}
	conn_queue_destroy(&q);
}

static void test_drain_is_fifo_and_respects_max(void)
{
	struct conn_queue q;
	int out[32], i, n, ok;

	if (conn_queue_init(&q, 16) != 0) {
		CHECK(0, "drain: init failed: %s", strerror(errno));
		return;
	}
	for (i = 0; i < 10; i++)
		conn_queue_push(&q, i);
	for (i = 0; i < 32; i++)
		out[i] = -7;

	/* max 0 takes nothing and must not touch out (it may be NULL). */
	CHECK(conn_queue_drain(&q, NULL, 0) == 0, "drain: max 0 takes nothing");
	CHECK(conn_queue_size(&q) == 10, "drain: max 0 left the queue alone");

	n = conn_queue_drain(&q, out, 4);
	CHECK(n == 4, "drain: max 4 of 10 took %d", n);
	ok = 1;
	for (i = 0; i < 4; i++)
		ok &= out[i] == i;
	CHECK(ok, "drain: first four are 0..3 in order");
	CHECK(out[4] == -7, "drain: nothing written past max (out[4] = %d)", out[4]);
	CHECK(conn_queue_size(&q) == 6, "drain: 6 left after taking 4");

	n = conn_queue_drain(&q, out, 32);
	CHECK(n == 6, "drain: the rest is 6 tokens, took %d", n);
	ok = 1;
	for (i = 0; i < 6; i++)
		ok &= out[i] == 4 + i;
	CHECK(ok, "drain: the rest is 4..9 in order");
	CHECK(conn_queue_drain(&q, out, 32) == 0, "drain: empty queue gives 0");
	CHECK(q.pops == 10, "drain: each drained token counts as a pop (%llu)",
	      (unsigned long long)q.pops);
	conn_queue_destroy(&q);
}

/* ---- many producers, one consumer -------------------------------------- */

#define PRODUCERS 8
#define PER_PRODUCER 100000
/* A token carries its producer and sequence number; 2^20 > PER_PRODUCER. */
#define TOKEN(p, s) (((p) << 20) | (s))
#define TOKEN_PRODUCER(t) ((t) >> 20)
#define TOKEN_SEQ(t) ((t) & ((1 << 20) - 1))

struct mpsc {
	struct conn_queue q;
	pthread_barrier_t start;
	atomic_int producers_left;
	/* The consumer's view, read by main only after joining it. */
	int next_seq[PRODUCERS];
	long out_of_order, foreign;
	/* Each producer's own count of refused pushes (retried until accepted). */
	uint64_t local_refused[PRODUCERS];
	int retry; /* 1: retry a refused push until accepted; 0: give it up */
	int accepted[PRODUCERS];
};

struct producer_arg {
	struct mpsc *m;
	int id;
	int count;
};

static void *producer(void *arg)
{
	struct producer_arg *pa = arg;
	struct mpsc *m = pa->m;
	int s;

	pthread_barrier_wait(&m->start);
	for (s = 0; s < pa->count; s++) {
		while (conn_queue_push(&m->q, TOKEN(pa->id, s)) == 0) {
			m->local_refused[pa->id]++;
			if (!m->retry)
				break;
			sched_yield(); /* let the consumer make room */
		}
	}
	atomic_fetch_sub(&m->producers_left, 1);
	return NULL;
}

/* Checks one token: it must be the next sequence number of its producer,
 * which catches loss (a gap), duplication (a repeat) and reordering. */
static void consume(struct mpsc *m, int tok)
{
	int p = TOKEN_PRODUCER(tok);

	if (p < 0 || p >= PRODUCERS) {
		m->foreign++;
		return;
	}
	if (TOKEN_SEQ(tok) != m->next_seq[p])
		m->out_of_order++;
	m->next_seq[p] = TOKEN_SEQ(tok) + 1;
}

/* Pops concurrently with the producers, alternating single pops and drains
 * (the two ways a worker empties its queue), until every producer is done.
 * It stops there on purpose, so main sees a queue that may still hold
 * tokens and can check pushes == pops + size. */
static void *consumer(void *arg)
{
	struct mpsc *m = arg;
	int buf[64], n, i, tok, turn = 0;

	pthread_barrier_wait(&m->start);
	while (atomic_load(&m->producers_left) > 0) {
		if (turn++ & 1) {
			n = conn_queue_drain(&m->q, buf, 64);
			for (i = 0; i < n; i++)
				consume(m, buf[i]);
		} else if (conn_queue_pop(&m->q, &tok)) {
			consume(m, tok);
		} else {
			sched_yield();
		}
	}
	return NULL;
}

static void test_many_producers_lose_nothing(void)
{
	static struct mpsc m; /* large: keep it off the stack */
	struct producer_arg pa[PRODUCERS];
	pthread_t prod[PRODUCERS], cons;
	uint64_t local_refused = 0, size_at_stop;
	int i, tok, complete = 1;

	memset(&m, 0, sizeof(m));
	/* Small against 800000 tokens, so the producers outrun the consumer and
	 * meet a full queue many times. */
	if (conn_queue_init(&m.q, 256) != 0) {
		CHECK(0, "mpsc: init failed: %s", strerror(errno));
		return;
	}
	m.retry = 1;
	atomic_init(&m.producers_left, PRODUCERS);
	pthread_barrier_init(&m.start, NULL, PRODUCERS + 1);
	pthread_create(&cons, NULL, consumer, &m);
	for (i = 0; i < PRODUCERS; i++) {
		pa[i] = (struct producer_arg){ .m = &m, .id = i, .count = PER_PRODUCER };
		pthread_create(&prod[i], NULL, producer, &pa[i]);
	}
	for (i = 0; i < PRODUCERS; i++)
		pthread_join(prod[i], NULL);
	pthread_join(cons, NULL);

	/* Every thread is joined, so the counters can be read without the lock. */
	size_at_stop = (uint64_t)m.q.count;
	CHECK(m.q.pushes == (uint64_t)PRODUCERS * PER_PRODUCER,
	      "mpsc: pushes %llu, want %d (every retried push eventually accepted, once)",
	      (unsigned long long)m.q.pushes, PRODUCERS * PER_PRODUCER);
	CHECK(m.q.pushes == m.q.pops + size_at_stop,
	      "mpsc: pushes %llu != pops %llu + size %llu when the consumer stopped",
	      (unsigned long long)m.q.pushes, (unsigned long long)m.q.pops,
	      (unsigned long long)size_at_stop);
	for (i = 0; i < PRODUCERS; i++)
		local_refused += m.local_refused[i];
	CHECK(m.q.refused == local_refused,
	      "mpsc: refused counter %llu, producers saw %llu refusals (lost updates?)",
	      (unsigned long long)m.q.refused, (unsigned long long)local_refused);

	/* What the consumer left behind continues each producer's sequence. */
	while (conn_queue_pop(&m.q, &tok))
		consume(&m, tok);
	CHECK(m.out_of_order == 0, "mpsc: %ld tokens lost, duplicated or out of producer order",
	      m.out_of_order);
	CHECK(m.foreign == 0, "mpsc: %ld tokens no producer pushed", m.foreign);
	for (i = 0; i < PRODUCERS; i++)
		complete &= m.next_seq[i] == PER_PRODUCER;
	CHECK(complete, "mpsc: every producer's last token (seq %d) arrived", PER_PRODUCER - 1);
	CHECK(m.q.pops == m.q.pushes, "mpsc: pops %llu == pushes %llu after the final drain",
	      (unsigned long long)m.q.pops, (unsigned long long)m.q.pushes);
	printf("mpsc: %d producers x %d tokens through 256 slots, %llu refusals on the way\n",
	       PRODUCERS, PER_PRODUCER, (unsigned long long)m.q.refused);
	pthread_barrier_destroy(&m.start);
	conn_queue_destroy(&m.q);
}

/* A consumer that has not started yet is the slowest possible one: the
 * producers fill the queue and every push after that is refused and
 * counted, exactly, under contention. */
static void test_slow_consumer_counts_refusals(void)
{
	static struct mpsc m;
	struct producer_arg pa[PRODUCERS];
	pthread_t prod[PRODUCERS];
	const int per = 1000, cap = 1024;
	uint64_t local_refused = 0;
	int i, tok, prefix_ok = 1;

	memset(&m, 0, sizeof(m));
	if (conn_queue_init(&m.q, cap) != 0) {
		CHECK(0, "slow consumer: init failed: %s", strerror(errno));
		return;
	}
	m.retry = 0;
	atomic_init(&m.producers_left, PRODUCERS);
	pthread_barrier_init(&m.start, NULL, PRODUCERS);
	for (i = 0; i < PRODUCERS; i++) {
		pa[i] = (struct producer_arg){ .m = &m, .id = i, .count = per };
		pthread_create(&prod[i], NULL, producer, &pa[i]);
	}
	for (i = 0; i < PRODUCERS; i++)
		pthread_join(prod[i], NULL);

	for (i = 0; i < PRODUCERS; i++)
		local_refused += m.local_refused[i];
	CHECK(m.q.pushes == (uint64_t)cap, "slow consumer: pushes %llu, want exactly capacity %d",
	      (unsigned long long)m.q.pushes, cap);
	CHECK(m.q.refused == (uint64_t)(PRODUCERS * per - cap),
	      "slow consumer: refused %llu, want %d attempts - %d slots = %d",
	      (unsigned long long)m.q.refused, PRODUCERS * per, cap, PRODUCERS * per - cap);
	CHECK(m.q.refused == local_refused, "slow consumer: refused %llu, producers saw %llu",
	      (unsigned long long)m.q.refused, (unsigned long long)local_refused);

	/* Once full the queue stays full, so each producer's accepted tokens
	 * are a prefix of its sequence, in order: consume() flags any gap. */
	while (conn_queue_pop(&m.q, &tok))
		consume(&m, tok);
	CHECK(m.out_of_order == 0 && m.foreign == 0,
	      "slow consumer: %ld out of order, %ld foreign", m.out_of_order, m.foreign);
	for (i = 0; i < PRODUCERS; i++)
		prefix_ok &= (uint64_t)m.next_seq[i] == (uint64_t)per - m.local_refused[i];
	CHECK(prefix_ok, "slow consumer: each producer got back exactly the tokens it was told were queued");
	pthread_barrier_destroy(&m.start);
	conn_queue_destroy(&m.q);
}

/* ---- the policy on constructed loads ------------------------------------ */

/* A pool of num workers with worker i's queue holding depth[i] tokens and
 * open[i] published; depth or open may be NULL for all zeros. */
static int make_pool(struct conn_queue_pool *p, int num, enum handoff_policy pol, int cap, int thr,
		     const int *depth, const int *open)
{
	int i, k;

	if (conn_queue_pool_init(p, num, pol, cap, thr) != 0) {
		CHECK(0, "pool init (%d, %s, %d, %d) failed: %s", num, handoff_policy_name(pol), cap,
		      thr, strerror(errno));
		return -1;
	}
	for (i = 0; i < num; i++) {
		for (k = 0; depth && k < depth[i]; k++)
			conn_queue_push(&p->q[i], 1000 + k);
		atomic_store(&p->open[i], open ? open[i] : 0);
	}
	return 0;
}

static void test_pool_init_rejects(void)
{
	struct conn_queue_pool p;

	errno = 0;
	CHECK(conn_queue_pool_init(&p, 0, HANDOFF_OPEN, 8, 1) == -1 && errno == EINVAL,
	      "pool init: 0 workers rejected with EINVAL");
	errno = 0;
	CHECK(conn_queue_pool_init(&p, CONN_QUEUE_POOL_MAX + 1, HANDOFF_OPEN, 8, 1) == -1 &&
		      errno == EINVAL,
	      "pool init: more than CONN_QUEUE_POOL_MAX rejected with EINVAL");
	errno = 0;
	CHECK(conn_queue_pool_init(&p, 4, HANDOFF_OPEN, 0, 1) == -1 && errno == EINVAL,
	      "pool init: capacity 0 rejected with EINVAL");
	errno = 0;
	CHECK(conn_queue_pool_init(&p, 4, HANDOFF_OPEN, 8, -1) == -1 && errno == EINVAL,
	      "pool init: negative steal threshold rejected with EINVAL");
	errno = 0;
	CHECK(conn_queue_pool_init(&p, 4, (enum handoff_policy)42, 8, 1) == -1 && errno == EINVAL,
	      "pool init: unknown policy rejected with EINVAL");
	CHECK(conn_queue_pool_init(&p, CONN_QUEUE_POOL_MAX, HANDOFF_OPEN, 8, 1) == 0,
	      "pool init: CONN_QUEUE_POOL_MAX workers accepted");
	conn_queue_pool_destroy(&p);
}

static void test_policy_off_never_hands_off(void)
{
	struct conn_queue_pool p;
	int tok;

	/* OFF is plain reuseport: the most skewed load still stays local, and
	 * handoff_try refuses without touching a queue. */
	if (make_pool(&p, 4, HANDOFF_OFF, 8, 0, NULL, NULL) != 0)
		return;
	CHECK(handoff_choose_target(&p, 0, 1000000) == -1, "OFF: huge local load still keeps (-1)");
	CHECK(handoff_peek_idle_worker(&p, 0) == -1, "OFF: no idle peer reported");
	CHECK(handoff_try(&p, 1, 42) == 0, "OFF: try refuses");
	CHECK(conn_queue_pop(&p.q[1], &tok) == 0, "OFF: try queued nothing");
	CHECK(p.q[1].refused == 0, "OFF: try did not reach the queue (refused %llu)",
	      (unsigned long long)p.q[1].refused);
	conn_queue_pool_destroy(&p);
}

static void test_policy_single_worker_keeps(void)
{
	struct conn_queue_pool p;

	/* One worker has no peer to hand to, whatever its load. */
	if (make_pool(&p, 1, HANDOFF_WRITTEN, 8, 0, NULL, NULL) == 0) {
		CHECK(handoff_choose_target(&p, 0, 1000) == -1, "num 1 WRITTEN: keeps (-1)");
		CHECK(handoff_peek_idle_worker(&p, 0) == -1, "num 1 WRITTEN: no peer");
		conn_queue_pool_destroy(&p);
	}
	if (make_pool(&p, 1, HANDOFF_OPEN, 8, 0, NULL, NULL) == 0) {
		CHECK(handoff_choose_target(&p, 0, 1000) == -1, "num 1 OPEN: keeps (-1)");
		conn_queue_pool_destroy(&p);
	}
}

static void test_policy_written_shortest_queue(void)
{
	struct conn_queue_pool p;
	/* Worker 0 is the caller; its own queue is the emptiest of all but
	 * must not be chosen. Peers 2 and 3 tie at 0: the lower index wins. */
	const int depth[4] = { 0, 3, 0, 0 };
	int t;

	if (make_pool(&p, 4, HANDOFF_WRITTEN, 8, 2, depth, NULL) != 0)
		return;
	t = handoff_choose_target(&p, 1, 5);
	CHECK(t == 0, "WRITTEN: worker 1 (load 5) picks worker 0 (queue 0, lowest of the ties), got %d", t);
	t = handoff_choose_target(&p, 0, 5);
	CHECK(t == 2, "WRITTEN: worker 0 excludes itself, picks 2 over 3 on the tie, got %d", t);
	t = handoff_peek_idle_worker(&p, 0);
	CHECK(t == 2, "WRITTEN: peek_idle_worker(exclude 0) = %d, want 2", t);
	t = handoff_peek_idle_worker(&p, 2);
	CHECK(t == 0, "WRITTEN: peek_idle_worker(exclude 2) = %d, want 0", t);
	/* A peer whose queue is shorter but not by the threshold: 5 - 3 = 2. */
	conn_queue_push(&p.q[0], 1);
	conn_queue_push(&p.q[0], 1);
	conn_queue_push(&p.q[2], 1);
	conn_queue_push(&p.q[2], 1);
	conn_queue_push(&p.q[2], 1);
	conn_queue_push(&p.q[3], 1);
	conn_queue_push(&p.q[3], 1);
	conn_queue_push(&p.q[3], 1);
	conn_queue_push(&p.q[3], 1); /* depths now { 2, 3, 3, 4 } */
	t = handoff_choose_target(&p, 3, 4);
	CHECK(t == 0, "WRITTEN: load 4 vs queue 2 is skew 2 = threshold, hands to 0, got %d", t);
	t = handoff_choose_target(&p, 3, 3);
	CHECK(t == -1, "WRITTEN: load 3 vs queue 2 is skew 1 < threshold, keeps, got %d", t);
	conn_queue_pool_destroy(&p);
}

static void test_policy_written_ignores_open(void)
{
	struct conn_queue_pool p;
	/* Worker 1 already serves 100 connections but has an empty queue; the
	 * others serve none and each has one queued. The note's rule looks only
	 * at queue depth, so worker 1 looks idlest: the flaw we measure. */
	const int depth[4] = { 0, 0, 1, 1 };
	const int open[4] = { 5, 100, 0, 0 };
	int t;

	if (make_pool(&p, 4, HANDOFF_WRITTEN, 8, 2, depth, open) == 0) {
		t = handoff_choose_target(&p, 0, 5);
		CHECK(t == 1, "WRITTEN: hands to worker 1 (100 open, empty queue), got %d", t);
		conn_queue_pool_destroy(&p);
	}
	/* The same loads under OPEN: worker 1 weighs 100, workers 2 and 3
	 * weigh 1 each; 5 - 1 >= 2, so worker 2 (lowest of the tie). */
	if (make_pool(&p, 4, HANDOFF_OPEN, 8, 2, depth, open) == 0) {
		t = handoff_choose_target(&p, 0, 5);
		CHECK(t == 2, "OPEN: hands to worker 2 (0 open + 1 queued), not 1, got %d", t);
		conn_queue_pool_destroy(&p);
	}
}

static void test_policy_open_counts_open_plus_queue(void)
{
	struct conn_queue_pool p;
	/* Peer 1: 3 open, nothing queued (load 3). Peer 2: nothing open, 2
	 * queued (load 2). OPEN picks 2; WRITTEN sees depths 0 and 2 and
	 * picks 1. */
	const int depth[3] = { 0, 0, 2 };
	const int open[3] = { 9, 3, 0 };
	int t;

	if (make_pool(&p, 3, HANDOFF_OPEN, 8, 1, depth, open) == 0) {
		t = handoff_peek_idle_worker(&p, 0);
		CHECK(t == 2, "OPEN: peek picks peer 2 (0+2) over peer 1 (3+0), got %d", t);
		t = handoff_choose_target(&p, 0, 9);
		CHECK(t == 2, "OPEN: load 9 vs 2 hands to 2, got %d", t);
		/* Threshold boundary against peer load 2, threshold 1: 3 - 2 = 1
		 * hands off, 2 - 2 = 0 keeps. */
		t = handoff_choose_target(&p, 0, 3);
		CHECK(t == 2, "OPEN: skew exactly 1 = threshold hands off, got %d", t);
		t = handoff_choose_target(&p, 0, 2);
		CHECK(t == -1, "OPEN: skew 0 < threshold keeps, got %d", t);
		/* Open counts move as workers publish them. */
		atomic_store(&p.open[1], 0);
		t = handoff_choose_target(&p, 0, 9);
		CHECK(t == 1, "OPEN: after peer 1 publishes 0 open it is idlest (0 < 2), got %d", t);
		conn_queue_pool_destroy(&p);
	}
	if (make_pool(&p, 3, HANDOFF_WRITTEN, 8, 1, depth, open) == 0) {
		t = handoff_choose_target(&p, 0, 9);
		CHECK(t == 1, "WRITTEN: same loads pick peer 1 (empty queue, 3 open), got %d", t);
		conn_queue_pool_destroy(&p);
	}
}

static void test_policy_threshold_boundary(void)
{
	struct conn_queue_pool p;
	const int depth[2] = { 0, 2 };
	const int open[2] = { 0, 1 };
	int t;

	/* WRITTEN, threshold 3, peer queue 2: load 5 is skew 3 (hands off),
	 * load 4 is skew 2 (keeps). */
	if (make_pool(&p, 2, HANDOFF_WRITTEN, 8, 3, depth, NULL) == 0) {
		t = handoff_choose_target(&p, 0, 5);
		CHECK(t == 1, "WRITTEN threshold 3: local 5 vs peer 2 hands off, got %d", t);
		t = handoff_choose_target(&p, 0, 4);
		CHECK(t == -1, "WRITTEN threshold 3: local 4 vs peer 2 keeps, got %d", t);
		conn_queue_pool_destroy(&p);
	}
	/* OPEN, threshold 3, peer 1 open + 1 queued = 2: the same boundary. */
	{
		const int d1[2] = { 0, 1 };
		if (make_pool(&p, 2, HANDOFF_OPEN, 8, 3, d1, open) == 0) {
			t = handoff_choose_target(&p, 0, 5);
			CHECK(t == 1, "OPEN threshold 3: local 5 vs peer 1+1 hands off, got %d", t);
			t = handoff_choose_target(&p, 0, 4);
			CHECK(t == -1, "OPEN threshold 3: local 4 vs peer 1+1 keeps, got %d", t);
			conn_queue_pool_destroy(&p);
		}
	}
	/* Threshold 0: equal loads hand off (the rule is >=), a lighter local
	 * worker keeps. */
	if (make_pool(&p, 2, HANDOFF_WRITTEN, 8, 0, depth, NULL) == 0) {
		CHECK(handoff_choose_target(&p, 0, 2) == 1, "threshold 0: equal load hands off");
		CHECK(handoff_choose_target(&p, 0, 1) == -1, "threshold 0: lighter local keeps");
		conn_queue_pool_destroy(&p);
	}
}

static void test_policy_skips_full_and_closed(void)
{
	struct conn_queue_pool p;
	int t;

	/* OPEN, capacity 4: peer 1 is full (load 0 + 4 = 4) and would beat
	 * peer 2 (10 open, load 10), but a full queue cannot take the
	 * connection, so peer 2 it is. */
	{
		const int depth[3] = { 0, 4, 0 };
		const int open[3] = { 50, 0, 10 };
		if (make_pool(&p, 3, HANDOFF_OPEN, 4, 1, depth, open) == 0) {
			t = handoff_choose_target(&p, 0, 50);
			CHECK(t == 2, "OPEN: full peer 1 skipped, peer 2 chosen, got %d", t);
			CHECK(handoff_try(&p, 1, 77) == 0, "try: full queue refuses");
			conn_queue_pool_destroy(&p);
		}
	}
	/* WRITTEN: peer 1 has the emptiest queue but is closed (its worker is
	 * going away); peer 2 with one queued token is chosen instead. */
	{
		const int depth[3] = { 0, 0, 1 };
		if (make_pool(&p, 3, HANDOFF_WRITTEN, 4, 1, depth, NULL) == 0) {
			conn_queue_close(&p.q[1]);
			t = handoff_choose_target(&p, 0, 5);
			CHECK(t == 2, "WRITTEN: closed peer 1 skipped, peer 2 chosen, got %d", t);
			t = handoff_peek_idle_worker(&p, 0);
			CHECK(t == 2, "WRITTEN: peek skips the closed peer, got %d", t);
			CHECK(handoff_try(&p, 1, 77) == 0, "try: closed queue refuses");
			conn_queue_pool_destroy(&p);
		}
	}
	/* No peer below capacity: nowhere to hand to, however skewed. */
	{
		const int depth[3] = { 0, 4, 4 };
		if (make_pool(&p, 3, HANDOFF_WRITTEN, 4, 0, depth, NULL) == 0) {
			CHECK(handoff_peek_idle_worker(&p, 0) == -1, "all peers full: peek -1");
			CHECK(handoff_choose_target(&p, 0, 1000000) == -1, "all peers full: keeps");
			conn_queue_pool_destroy(&p);
		}
		if (make_pool(&p, 3, HANDOFF_OPEN, 4, 0, depth, NULL) == 0) {
			CHECK(handoff_choose_target(&p, 0, 1000000) == -1, "OPEN, all peers full: keeps");
			conn_queue_pool_destroy(&p);
		}
	}
}

static void test_try_delivers(void)
{
	struct conn_queue_pool p;
	int out[4], n;

	if (make_pool(&p, 2, HANDOFF_OPEN, 2, 1, NULL, NULL) != 0)
		return;
	CHECK(handoff_try(&p, 1, 11) == 1, "try: queues into an empty peer");
	CHECK(handoff_try(&p, 1, 12) == 1, "try: queues a second");
	CHECK(handoff_try(&p, 1, 13) == 0, "try: capacity 2 refuses a third");
	CHECK(handoff_try(&p, 2, 14) == 0 && handoff_try(&p, -1, 14) == 0,
	      "try: a target outside the pool refuses");
	n = conn_queue_drain(&p.q[1], out, 4);
	CHECK(n == 2 && out[0] == 11 && out[1] == 12, "try: the peer drains 11, 12 (got %d)", n);
	CHECK(conn_queue_size(&p.q[0]) == 0, "try: nothing landed in worker 0's queue");
	CHECK(handoff_choose_target(&p, 5, 100) == -1 && handoff_choose_target(&p, -1, 100) == -1,
	      "choose: a local worker outside the pool keeps");
	conn_queue_pool_destroy(&p);
}

static void test_policy_names(void)
{
	enum handoff_policy pol, all[3] = { HANDOFF_OFF, HANDOFF_WRITTEN, HANDOFF_OPEN };
	int i;

	CHECK(strcmp(handoff_policy_name(HANDOFF_OFF), "off") == 0, "name: off");
	CHECK(strcmp(handoff_policy_name(HANDOFF_WRITTEN), "written") == 0, "name: written");
	CHECK(strcmp(handoff_policy_name(HANDOFF_OPEN), "open") == 0, "name: open");
	CHECK(strcmp(handoff_policy_name((enum handoff_policy)9), "?") == 0, "name: unknown is ?");
	for (i = 0; i < 3; i++) {
		pol = (enum handoff_policy)-1;
		CHECK(handoff_policy_parse(handoff_policy_name(all[i]), &pol) == 0 && pol == all[i],
		      "parse: %s round-trips", handoff_policy_name(all[i]));
	}
	pol = HANDOFF_OPEN;
	CHECK(handoff_policy_parse("bogus", &pol) == -1 && pol == HANDOFF_OPEN,
	      "parse: unknown name rejected, *out untouched");
	CHECK(handoff_policy_parse("OPEN", &pol) == -1, "parse: names are lower case");
	CHECK(handoff_policy_parse("", &pol) == -1, "parse: empty rejected");
	CHECK(handoff_policy_parse(NULL, &pol) == -1, "parse: NULL rejected");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(WATCHDOG_SECONDS);

	RUN(test_init_rejects_bad_capacity);
	RUN(test_full_queue_refuses_without_blocking);
	RUN(test_closed_queue_refuses_but_keeps_tokens);
	RUN(test_fifo_across_wraparound);
	RUN(test_drain_is_fifo_and_respects_max);
	RUN(test_many_producers_lose_nothing);
	RUN(test_slow_consumer_counts_refusals);
	RUN(test_pool_init_rejects);
	RUN(test_policy_off_never_hands_off);
	RUN(test_policy_single_worker_keeps);
	RUN(test_policy_written_shortest_queue);
	RUN(test_policy_written_ignores_open);
	RUN(test_policy_open_counts_open_plus_queue);
	RUN(test_policy_threshold_boundary);
	RUN(test_policy_skips_full_and_closed);
	RUN(test_try_delivers);
	RUN(test_policy_names);
	return check_summary();
}
