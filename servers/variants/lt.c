/* lt: level-triggered listener, one accept per wakeup, so a worker returns
 * to epoll_wait between accepts and a sibling may take the next one. */
#include "../server.h"

#include <sys/epoll.h>

static int lt_start(struct worker *w, char *err, size_t errlen)
{
	return worker_watch_listener(w, EPOLLIN, err, errlen);
}

static void lt_readable(struct worker *w)
{
	worker_accept_batch(w, 1);
}

const struct accept_variant variant_lt = {
	.name = "lt",
	.mechanism = "one shared listener, level-triggered, one accept per wakeup",
	.worker_start = lt_start,
	.listener_readable = lt_readable,
};
