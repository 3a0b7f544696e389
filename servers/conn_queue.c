/* conn_queue.c: the connection queues, their pool and the hand-off policy
 * declared in conn_queue.h. */
#include "conn_queue.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int conn_queue_init(struct conn_queue *q, int capacity)
{
	int err;

	memset(q, 0, sizeof(*q));
	if (capacity < 1) {
		errno = EINVAL;
		return -1;
	}
	q->slots = calloc((size_t)capacity, sizeof(*q->slots));
	if (!q->slots) {
		errno = ENOMEM;
		return -1;
	}
	err = pthread_mutex_init(&q->mu, NULL);
	if (err) {
		free(q->slots);
		q->slots = NULL;
		errno = err;
		return -1;
	}
	q->capacity = capacity;
	return 0;
}

void conn_queue_destroy(struct conn_queue *q)
{
	/* slots is set exactly while the mutex exists: never destroy it twice. */
	if (!q->slots)
		return;
	pthread_mutex_destroy(&q->mu);
	free(q->slots);
	q->slots = NULL;
	q->head = q->tail = q->count = 0;
}

int conn_queue_push(struct conn_queue *q, int token)
{
	int ok = 0;

	pthread_mutex_lock(&q->mu);
	if (!q->closed && q->count < q->capacity) {
		q->slots[q->tail] = token;
		q->tail = q->tail + 1 == q->capacity ? 0 : q->tail + 1;
		q->count++;
		q->pushes++;
		ok = 1;
	} else {
		q->refused++;
	}
	pthread_mutex_unlock(&q->mu);
	return ok;
}

/* Takes the head token; the caller holds mu and has checked count > 0. */
static int take_locked(struct conn_queue *q)
{
	int token = q->slots[q->head];

	q->head = q->head + 1 == q->capacity ? 0 : q->head + 1;
	q->count--;
	q->pops++;
	return token;
}

int conn_queue_pop(struct conn_queue *q, int *token)
{
	int ok = 0;

	pthread_mutex_lock(&q->mu);
	if (q->count > 0) {
		*token = take_locked(q);
		ok = 1;
	}
	pthread_mutex_unlock(&q->mu);
	return ok;
}

int conn_queue_drain(struct conn_queue *q, int *out, int max)
{
	int n = 0;

	if (max < 1)
		return 0;
	pthread_mutex_lock(&q->mu);
	while (n < max && q->count > 0)
		out[n++] = take_locked(q);
	pthread_mutex_unlock(&q->mu);
	return n;
}

int conn_queue_size(struct conn_queue *q)
{
	int n;

	pthread_mutex_lock(&q->mu);
	n = q->count;
	pthread_mutex_unlock(&q->mu);
	return n;
}

void conn_queue_close(struct conn_queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->closed = 1;
	pthread_mutex_unlock(&q->mu);
}

int conn_queue_pool_init(struct conn_queue_pool *p, int num, enum handoff_policy policy, int capacity,
		      int steal_threshold)
{
	int i;

	memset(p, 0, sizeof(*p));
	if (num < 1 || num > CONN_QUEUE_POOL_MAX || capacity < 1 || steal_threshold < 0 ||
	    (policy != HANDOFF_OFF && policy != HANDOFF_WRITTEN && policy != HANDOFF_OPEN)) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < CONN_QUEUE_POOL_MAX; i++)
		atomic_init(&p->open[i], 0);
	for (i = 0; i < num; i++) {
		if (conn_queue_init(&p->q[i], capacity) != 0) {
			int saved = errno;

			while (i-- > 0)
				conn_queue_destroy(&p->q[i]);
			errno = saved;
			return -1;
		}
	}
	p->num = num;
	p->policy = policy;
	p->capacity = capacity;
	p->steal_threshold = steal_threshold;
	return 0;
}

void conn_queue_pool_destroy(struct conn_queue_pool *p)
{
	int i;

	for (i = 0; i < p->num; i++)
		conn_queue_destroy(&p->q[i]);
	p->num = 0;
}

/* The idlest peer other than exclude and its load (what the policy compares
 * against local_load), or -1. Each queue is read under its own lock, one at
 * a time: the answer is a snapshot that peers may change at once, which is
 * fine for a placement hint, and holding several locks would serialize every
 * worker's accept path. open[] is a hint too, so a relaxed load will do. */
static int idlest_peer(struct conn_queue_pool *p, int exclude, int *load)
{
	int best = -1, best_load = INT_MAX, i;

	if (p->policy == HANDOFF_OFF)
		return -1;
	for (i = 0; i < p->num; i++) {
		struct conn_queue *q = &p->q[i];
		int depth, usable, l;

		if (i == exclude)
			continue;
		pthread_mutex_lock(&q->mu);
		depth = q->count;
		usable = !q->closed && q->count < q->capacity;
		pthread_mutex_unlock(&q->mu);
		if (!usable)
			continue;
		l = depth;
		if (p->policy == HANDOFF_OPEN && p->load) {
			int64_t counted = p->load(p->load_ctx, i);

			l = counted > INT_MAX ? INT_MAX : counted < 0 ? 0 : (int)counted;
		} else if (p->policy == HANDOFF_OPEN) {
			int open = atomic_load_explicit(&p->open[i], memory_order_relaxed);

			/* Saturate: a wild count must not wrap into "idle". */
			l = open > INT_MAX - depth ? INT_MAX : open + depth;
		}
		if (l < best_load || best < 0) { /* strict: ties keep the lowest index */
			best = i;
			best_load = l;
		}
	}
	if (best >= 0 && load)
		*load = best_load;
	return best;
}

int handoff_peek_idle_worker(struct conn_queue_pool *p, int exclude)
{
	return idlest_peer(p, exclude, NULL);
}

int handoff_choose_target(struct conn_queue_pool *p, int local_worker, int local_load)
{
	int peer, peer_load = 0;

	if (p->policy == HANDOFF_OFF || p->num < 2 || local_worker < 0 || local_worker >= p->num)
		return -1;
	/* The load used in the comparison is the one the peer was chosen on,
	 * not a second reading that a concurrent push could have changed. */
	peer = idlest_peer(p, local_worker, &peer_load);
	if (peer < 0)
		return -1;
	/* In long long: local_load - peer_load must not overflow int. */
	if ((long long)local_load - peer_load >= p->steal_threshold)
		return peer;
	return -1;
}

int handoff_try(struct conn_queue_pool *p, int target, int fd)
{
	if (p->policy == HANDOFF_OFF || target < 0 || target >= p->num)
		return 0;
	return conn_queue_push(&p->q[target], fd);
}

static const char *const policy_names[] = {
	[HANDOFF_OFF] = "off",
	[HANDOFF_WRITTEN] = "written",
	[HANDOFF_OPEN] = "open",
};

const char *handoff_policy_name(enum handoff_policy p)
{
	if ((unsigned)p < sizeof(policy_names) / sizeof(policy_names[0]))
		return policy_names[p];
	return "?";
}

int handoff_policy_parse(const char *s, enum handoff_policy *out)
{
	unsigned i;

	for (i = 0; s && i < sizeof(policy_names) / sizeof(policy_names[0]); i++) {
		if (strcmp(s, policy_names[i]) == 0) {
			*out = (enum handoff_policy)i;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}
