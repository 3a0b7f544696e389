/* lt-yield: as lt, plus sched_yield() after each accept, giving the CPU to
 * a sibling that is runnable on the same CPU before re-entering epoll_wait. */
#include "../server.h"

#include <sched.h>
#include <sys/epoll.h>

static int lt_yield_start(struct worker *w, char *err, size_t errlen)
{
	return worker_watch_listener(w, EPOLLIN, err, errlen);
}

static void lt_yield_readable(struct worker *w)
{
	if (worker_accept_batch(w, 1) > 0)
		sched_yield();
}

const struct accept_variant variant_lt_yield = {
	.name = "lt-yield",
	.mechanism = "as lt, plus `sched_yield()` after each accept",
	.worker_start = lt_yield_start,
	.listener_readable = lt_yield_readable,
};
