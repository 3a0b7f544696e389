/* bare: the race. One shared listener in every worker's own epoll,
 * edge-triggered; every worker is woken and whoever reaches accept() first
 * drains the queue until EAGAIN.
 *
 * --shared-epoll (threads mode): the threads wait in ONE epoll instance
 * instead (shared_epoll.c), so the listener has one waiter entry and the kernel
 * wakes one thread per event, the one that waited last (epoll's waiters are
 * exclusive and queued at the head). */
#include "../server.h"

#include <sys/epoll.h>

static int bare_start(struct worker *w, char *err, size_t errlen)
{
	return worker_watch_listener(w, EPOLLIN | EPOLLET, err, errlen);
}

static void bare_readable(struct worker *w)
{
	worker_accept_batch(w, -1);
}

const struct accept_variant variant_bare = {
	.name = "bare",
	.mechanism = "one shared listener in every worker's epoll, `EPOLLIN|EPOLLET`, accept until `EAGAIN`: "
		     "the race",
	.knob_sets = { &shared_epoll_knobs },
	.worker_start = bare_start,
	.listener_readable = bare_readable,
};
