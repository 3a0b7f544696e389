/* exclusive-reorder: nginx >= 1.21.6 with EPOLLEXCLUSIVE. The listener is
 * level-triggered and exclusive, one accept per event, and every 16 accepts
 * the worker deletes and re-adds it: the kernel tends to wake the first
 * exclusive waiter on the listener's queue, and re-adding moves this worker's
 * entry to the back so a sibling is woken next. */
#include "../server.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>

#define REORDER_EVERY 16 /* nginx: c->requests++ % 16 */
#define STR_(x) #x
#define STR(x) STR_(x) /* REORDER_EVERY in the mechanism text */
#define EVENTS (EPOLLIN | EPOLLEXCLUSIVE)

struct reorder_state {
	unsigned long events; /* listener events handled */
};

static int reorder_start(struct worker *w, char *err, size_t errlen)
{
	w->vstate = calloc(1, sizeof(struct reorder_state));
	if (!w->vstate) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return worker_watch_listener(w, EVENTS, err, errlen);
}

static void reorder_readable(struct worker *w)
{
	struct reorder_state *st = w->vstate;

	worker_accept_batch(w, 1);
	if (st->events++ % REORDER_EVERY != 0)
		return;
	/* DEL + ADD: to the back of the listener's exclusive waiters. */
	if (worker_listener_enable(w, EVENTS, 0) == 0)
		worker_listener_enable(w, EVENTS, 1);
}

const struct accept_variant variant_exclusive_reorder = {
	.name = "exclusive-reorder",
	.mechanism = "nginx >= 1.21.6: level-triggered `EPOLLEXCLUSIVE`, one accept per event, and every "
		     STR(REORDER_EVERY) " accepts the listener is deleted and re-added so the worker goes "
		     "to the back of the kernel's exclusive waiters",
	.worker_start = reorder_start,
	.listener_readable = reorder_readable,
};
