/* reuseport-bpf: per-worker SO_REUSEPORT listeners in one group, as
 * reuseport, but steered by an sk_reuseport BPF program
 * (ebpf/worker_load.bpf.c) to the live worker with the least load instead
 * of by the kernel's 4-tuple hash.
 *
 * The load is the one every balancing variant keeps (load.h), in the
 * kernel: the program counts each SYN it steers in the chosen slot's window
 * (it stops counting when the connection is established, or within 1 s if
 * it never is); once established, a connection counts for the slot of the
 * listener that accepted it (the listener's tag is cloned to it) until it
 * leaves ESTABLISHED, which the kernel sees the moment the client's FIN or
 * RST arrives. The workers do nothing per connection.
 *
 * The supervisor loads the program before fork (load_open). Each worker
 * binds its listener and joins (load_join: attaches the program to the
 * group, doing it from each worker keeps it attached across respawns; puts
 * the listener in the sockarray at its slot, server.h: a reload's new worker
 * has its own; tags the listener; marks the slot live). The supervisor
 * restarts a reaped worker's slot (live 0, its counts 0 under a new
 * generation), so a dead worker is never chosen. With --reuseport-migrate the program
 * is loaded as BPF_SK_REUSEPORT_SELECT_OR_MIGRATE, so the connections queued
 * at a closing listener are placed by the same selection (counted in the
 * SYN window of their new slot). Loading needs root (CAP_BPF).
 *
 * Test switch: ACCEPTLAB_TEST_PRELOAD=INDEX:N makes the supervisor start worker
 * INDEX's held count at N before fork (INDEX < --workers, 0 <= N <= 1000000000),
 * so a test can check that the program steers by load. A malformed value
 * makes the server exit 2 naming the variable. Unset in normal use.
 */
#include "../server.h"
#include "../load.h"
#include "reuseport_common.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#define PRELOAD_ENV "ACCEPTLAB_TEST_PRELOAD"
#define PRELOAD_MAX 1000000000LL

/* Parses ACCEPTLAB_TEST_PRELOAD: 0 (unset: *index = -1), or -1 + err. */
static int parse_preload(int workers, int *index, long long *load, char *err, size_t errlen)
{
	const char *v = getenv(PRELOAD_ENV);
	char *end;
	long i;

	*index = -1;
	*load = 0;
	if (!v)
		return 0;
	errno = 0;
	if (!isdigit((unsigned char)*v))
		goto bad;
	i = strtol(v, &end, 10);
	if (*end != ':' || errno || i >= workers)
		goto bad;
	v = end + 1;
	if (!isdigit((unsigned char)*v))
		goto bad;
	*load = strtoll(v, &end, 10);
	if (*end || errno || *load > PRELOAD_MAX)
		goto bad;
	*index = (int)i;
	return 0;
bad:
	snprintf(err, errlen, "%s=%s: expected INDEX:N with 0 <= INDEX < %d (--workers) and 0 <= N <= %lld",
		 PRELOAD_ENV, getenv(PRELOAD_ENV), workers, PRELOAD_MAX);
	return -1;
}

static unsigned load_flags(void)
{
	return LOAD_STEER | LOAD_NEED_KERNEL | (reuseport_migrate_wanted() ? LOAD_MIGRATE : 0);
}

static int rpbpf_before_fork(struct server *srv, char *err, size_t errlen)
{
	struct load_account *la;
	long long preload;
	int preload_index;

	if (parse_preload(srv->cfg.workers, &preload_index, &preload, err, errlen) < 0)
		return -1;
	la = load_open(srv, load_flags(), err, errlen);
	if (!la)
		return -1;
	if (preload_index >= 0)
		load_preload(la, preload_index, preload);
	if (reuseport_setup_migrate(err, errlen) < 0)
		return -1;
	srv->vshared = la;
	srv->accounting = load_accounting(la);
	return 0;
}

static int rpbpf_start(struct worker *w, char *err, size_t errlen)
{
	if (worker_bind_own_listener(w, err, errlen) < 0)
		return -1;
	if (load_join(w->srv->vshared, w->slot, w->listen_fd, err, errlen) < 0)
		return -1;
	load_slot_owned(w->srv->vshared, w->slot, w->pid);
	return worker_watch_listener(w, EPOLLIN | EPOLLET, err, errlen);
}

static void rpbpf_readable(struct worker *w)
{
	worker_accept_batch(w, -1);
}

/* The worker stops taking connections (SIGTERM, a reload): no longer a
 * candidate. */
static void rpbpf_leaving(struct worker *w)
{
	load_leave(w->srv->vshared, w->slot);
}

/* Supervisor: the worker in slot is gone; its listener left the sockarray
 * when it closed. Clear the slot so the program never picks it, and forget
 * the connections it held (they died with it). */
static void rpbpf_worker_reaped(struct server *srv, int slot, pid_t pid)
{
	if (!srv->vshared || slot < 0 || slot >= MAX_SLOTS)
		return;
	load_leave(srv->vshared, slot);
	load_slot_reaped(srv->vshared, slot, slot % srv->cfg.workers, pid);
}

static int rpbpf_describe(struct worker *w, char *buf, size_t len)
{
	const struct server *srv = w->srv;
	size_t off = (size_t)snprintf(buf, len, "{\"variant\":\"reuseport-bpf\",\"worker\":%d,\"slot\":%d,",
				      w->index, w->slot);

	if (off < len)
		off += (size_t)load_describe(srv->vshared, srv->nslots, srv->cfg.workers, NULL, NULL, buf + off,
					     len - off);
	if (off < len)
		off += (size_t)snprintf(buf + off, len - off, "}\n");
	return off < len ? (int)off : (int)len - 1;
}

/* --spawn-workers: the load accounting's maps and program (the exec'd
 * worker needs no skeleton: it attaches the program and updates the maps
 * by descriptor). */
static int rpbpf_spawn_fds(const struct server *srv, int *fds, int max)
{
	return load_spawn_fds(srv->vshared, fds, max);
}

static int rpbpf_spawn_import(struct server *srv, const int *fds, int n, char *err, size_t errlen)
{
	srv->vshared = load_import(srv, load_flags(), fds, n, err, errlen);
	return srv->vshared ? 0 : -1;
}

const struct accept_variant variant_reuseport_bpf = {
	.name = "reuseport-bpf",
	.mechanism = "as reuseport, plus a `BPF_PROG_TYPE_SK_REUSEPORT` program that sends each new "
		     "connection to the live worker with the least load, counted in the kernel (root only)",
	.bind_per_worker = 1,
	.knob_sets = { &reuseport_migrate_knobs },
	.before_fork = rpbpf_before_fork,
	.worker_start = rpbpf_start,
	.listener_readable = rpbpf_readable,
	.leaving = rpbpf_leaving,
	.worker_reaped = rpbpf_worker_reaped,
	.describe = rpbpf_describe,
	.spawn_fds = rpbpf_spawn_fds,
	.spawn_import = rpbpf_spawn_import,
};
