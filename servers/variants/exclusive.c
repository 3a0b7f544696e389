/* exclusive: as bare, but the listener is registered with EPOLLEXCLUSIVE,
 * so the kernel wakes one (or a few) of the waiting epolls instead of all. */
#include "../server.h"

#include <sys/epoll.h>

static int exclusive_start(struct worker *w, char *err, size_t errlen)
{
	return worker_watch_listener(w, EPOLLIN | EPOLLET | EPOLLEXCLUSIVE, err, errlen);
}

static void exclusive_readable(struct worker *w)
{
	worker_accept_batch(w, -1);
}

const struct accept_variant variant_exclusive = {
	.name = "exclusive",
	.mechanism = "as bare, registered with `EPOLLEXCLUSIVE` (the kernel wakes one waiter, not all)",
	.worker_start = exclusive_start,
	.listener_readable = exclusive_readable,
};
