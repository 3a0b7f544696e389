/* reuseport: each worker binds its own SO_REUSEPORT listener after the fork
 * and the kernel spreads connections over the group by a hash of the
 * 4-tuple. No wakeup race (each listener has one waiter), but a connection
 * queued at a worker's own listener is reset if that worker dies, unless
 * --reuseport-migrate lets the kernel move it to a sibling. */
#include "../server.h"
#include "reuseport_common.h"

#include <sys/epoll.h>

static int reuseport_before_fork(struct server *srv, char *err, size_t errlen)
{
	(void)srv;
	return reuseport_setup_migrate(err, errlen);
}

static int reuseport_start(struct worker *w, char *err, size_t errlen)
{
	if (worker_bind_own_listener(w, err, errlen) < 0)
		return -1;
	return worker_watch_listener(w, EPOLLIN | EPOLLET, err, errlen);
}

static void reuseport_readable(struct worker *w)
{
	worker_accept_batch(w, -1);
}

const struct accept_variant variant_reuseport = {
	.name = "reuseport",
	.mechanism = "each worker binds its own `SO_REUSEPORT` listener after the fork; the kernel picks "
		     "one by a hash of the 4-tuple",
	.bind_per_worker = 1,
	.knob_sets = { &reuseport_migrate_knobs },
	.before_fork = reuseport_before_fork,
	.worker_start = reuseport_start,
	.listener_readable = reuseport_readable,
};
