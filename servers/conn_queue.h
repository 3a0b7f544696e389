/* conn_queue.h: the bounded, mutex-guarded per-thread connection queues
 * that the handoff variant (variants/handoff.c) is built on, and the policy
 * that picks a queue. They move a freshly accepted connection from the
 * worker the kernel picked to an idler peer, at user level, after the
 * hand-off design note (seed 003). Each worker owns one bounded queue of
 * int tokens (descriptors; struct conn_queue); any peer may push into it,
 * only the owner pops. The pool (struct conn_queue_pool) holds one per
 * worker, and a policy (handoff_*) decides, per new connection, whether to
 * keep it or push it to the idlest peer.
 *
 * Only new connections move: an established connection stays with the worker
 * that took it. Nothing here blocks beyond a short mutex hold, and nothing
 * prints or exits; like net.c, errors are returned. */
#ifndef ACCEPTLAB_CONN_QUEUE_H
#define ACCEPTLAB_CONN_QUEUE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define CONN_QUEUE_POOL_MAX 64

/* A bounded multi-producer, single-consumer FIFO. count tells full from
 * empty, so all capacity slots are usable. */
struct conn_queue {
	int *slots;            /* circular buffer, capacity slots */
	int head, tail, count, capacity;
	int closed;            /* set by conn_queue_close: push refuses from then on */
	pthread_mutex_t mu;
	uint64_t pushes, pops, refused;   /* guarded by mu */
};

/* Sets up an empty queue of capacity slots. Returns 0, or -1 with errno:
 * EINVAL for capacity < 1, ENOMEM, or what pthread_mutex_init reports. */
int conn_queue_init(struct conn_queue *q, int capacity);

/* Frees the slots; tokens still queued are dropped, not closed (they are
 * only ints to the queue: draining and closing them is the owner's job).
 * A second call is harmless. */
void conn_queue_destroy(struct conn_queue *q);

/* Appends token. Returns 1 when queued, 0 when refused because the queue is
 * full or closed (refused is counted). Never waits for room: a producer that
 * is refused keeps the connection itself, which is the point under skew. */
int conn_queue_push(struct conn_queue *q, int token);

/* Takes the oldest token into *token and returns 1, or returns 0 when empty. */
int conn_queue_pop(struct conn_queue *q, int *token);

/* Takes up to max tokens, oldest first, into out[0..) under one lock hold,
 * so a worker empties its queue once per loop turn rather than per token.
 * Returns how many were taken (0 when empty or max < 1). */
int conn_queue_drain(struct conn_queue *q, int *out, int max);

/* Tokens queued right now (a snapshot: peers may push meanwhile). */
int conn_queue_size(struct conn_queue *q);

/* Refuses every later push, so a worker that is going away stops receiving
 * connections it would never serve; what is already queued stays for the
 * owner (or whoever cleans up) to drain and close. */
void conn_queue_close(struct conn_queue *q);

enum handoff_policy {
	HANDOFF_OFF,      /* the design's enabled=false: never hand off (plain reuseport) */
	HANDOFF_WRITTEN,  /* the note's choose_handoff_target as written: local_load vs the idlest peer's QUEUE DEPTH */
	HANDOFF_OPEN,     /* corrected: local_load vs the idlest peer's open connections + queue depth */
};

/* One queue per worker, indexed by worker number, and the policy that is
 * read once at start (it is never changed while workers run). */
struct conn_queue_pool {
	struct conn_queue q[CONN_QUEUE_POOL_MAX];
	_Atomic int open[CONN_QUEUE_POOL_MAX];  /* each worker publishes its open-connection count here */
	int num;
	enum handoff_policy policy;
	int capacity;
	int steal_threshold;
	/* Optional (NULL after init): a worker's load as the server counts it
	 * (load.h: held connections plus those queued to it). When set,
	 * HANDOFF_OPEN compares load(load_ctx, i) instead of open[i] + queue
	 * size. */
	int64_t (*load)(void *load_ctx, int worker);
	void *load_ctx;
};

/* Sets up num queues of capacity slots each, and open[] all 0. The queues
 * exist under HANDOFF_OFF too, so setup and teardown do not depend on the
 * policy. Returns 0, or -1 with errno EINVAL (num outside
 * 1..CONN_QUEUE_POOL_MAX, capacity < 1, steal_threshold < 0, an unknown
 * policy) or what conn_queue_init reports; nothing is left allocated. */
int conn_queue_pool_init(struct conn_queue_pool *p, int num, enum handoff_policy policy, int capacity,
		      int steal_threshold);

/* Destroys the queues; queued tokens are dropped, not closed (drain first). */
void conn_queue_pool_destroy(struct conn_queue_pool *p);

/* The peer (not exclude) with the shortest queue; -1 when the policy is OFF
 * or no peer's queue is below capacity (closed queues are skipped too). Ties
 * go to the lowest index. Under HANDOFF_OPEN, "shortest" means least
 * open[i] + queue size, still skipping full and closed queues. */
int handoff_peek_idle_worker(struct conn_queue_pool *p, int exclude);

/* The target for a newly accepted connection on local_worker whose current
 * load is local_load (its open connections, not counting the new one), or
 * -1 to keep it: -1 when the policy is OFF, num < 2, local_worker is not a
 * worker of the pool, or there is no idle peer; otherwise the idle peer when
 * local_load - peer_load >= steal_threshold, where peer_load is the peer's
 * queue size (WRITTEN) or open + queue size (OPEN). WRITTEN is the note's
 * rule as written: a peer busy with many open connections but an empty queue
 * looks idle to it, which is the flaw we measure. */
int handoff_choose_target(struct conn_queue_pool *p, int local_worker, int local_load);

/* Pushes fd into worker target's queue: 1 when queued, 0 when the policy is
 * OFF, target is not a worker of the pool, or the queue is full or closed.
 * On 0 the caller still owns fd and serves it itself. */
int handoff_try(struct conn_queue_pool *p, int target, int fd);

/* "off", "written", "open" ("?" for anything else). */
const char *handoff_policy_name(enum handoff_policy p);

/* Parses one of the names above into *out. Returns 0, or -1 with errno
 * EINVAL (and *out untouched) for NULL or any other string. */
int handoff_policy_parse(const char *s, enum handoff_policy *out);

#endif
