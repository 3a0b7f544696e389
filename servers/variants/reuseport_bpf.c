/* reuseport-bpf: per-worker SO_REUSEPORT listeners in one group, as
 * reuseport, but steered by an sk_reuseport BPF program
 * (ebpf/reuseport_select.bpf.c) to the live worker with the fewest open
 * connections instead of by the kernel's 4-tuple hash.
 *
 * The supervisor loads the program before fork and maps its worker_slots
 * array (BPF_F_MMAPABLE) MAP_SHARED, so every worker sees the same slots.
 * Each worker binds its listener, attaches the program to the group
 * (SO_ATTACH_REUSEPORT_EBPF; doing it from each worker keeps it attached
 * across respawns), puts the listener in the sockarray at its slot
 * (server.h: a reload's new worker has its own) and
 * marks its slot live. The program counts each connection it steers; the
 * worker uncounts it when it closes, with an atomic op on the shared page
 * (no syscall). The supervisor clears a reaped worker's slot (live 0, load
 * 0), so a dead worker is never chosen. With --reuseport-migrate the program
 * is loaded as BPF_SK_REUSEPORT_SELECT_OR_MIGRATE, so the connections queued
 * at a closing listener are placed (and counted) by the same selection.
 * Loading needs root (CAP_BPF).
 *
 * Test knob: ACCEPTLAB_TEST_PRELOAD=INDEX:N makes the supervisor start worker
 * INDEX's load at N before fork (INDEX < --workers, 0 <= N <= 1000000000),
 * so a test can check that the program steers by load. A malformed value
 * makes the server exit 2 naming the variable. Unset in normal use.
 */
#include "../server.h"
#include "reuseport_common.h"
#include "reuseport_select.h"
#include "reuseport_select.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define PRELOAD_ENV "ACCEPTLAB_TEST_PRELOAD"
#define PRELOAD_MAX 1000000000LL

_Static_assert(REUSEPORT_SELECT_MAX_INDEXES == MAX_WORKERS, "ebpf/reuseport_select.h must match server.h");
_Static_assert(REUSEPORT_SELECT_MAX_WORKERS == MAX_SLOTS,
	       "ebpf/reuseport_select.h and servers/server.h disagree on the worker count");
_Static_assert(sizeof(struct worker_slot) % 8 == 0,
	       "an mmapped BPF array's elements are 8-byte aligned: the slot must be too");

/* What before_fork makes; inherited by every worker (srv->vshared). */
struct rpbpf_shared {
	struct reuseport_select_bpf *skel;
	int prog_fd;               /* select_least_loaded */
	int listeners_fd;          /* worker_listeners (REUSEPORT_SOCKARRAY) */
	int slots_fd;              /* worker_slots */
	struct worker_slot *slots; /* worker_slots, mapped MAP_SHARED */
	size_t slots_len;
};

static int map_slots(struct rpbpf_shared *sh, char *err, size_t errlen)
{
	long page = sysconf(_SC_PAGESIZE);

	sh->slots_len = (MAX_SLOTS * sizeof(struct worker_slot) + (size_t)page - 1) & ~((size_t)page - 1);
	sh->slots = mmap(NULL, sh->slots_len, PROT_READ | PROT_WRITE, MAP_SHARED, sh->slots_fd, 0);
	if (sh->slots == MAP_FAILED) {
		snprintf(err, errlen, "mmap of the worker_slots BPF map: %s", strerror(errno));
		sh->slots = NULL;
		return -1;
	}
	return 0;
}

/* libbpf's last warning, kept for the error line instead of being printed
 * (the server's errors are one line each). */
static char libbpf_last[ERRLEN];

__attribute__((format(printf, 2, 0)))
static int libbpf_keep_last(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	size_t n;

	if (level != LIBBPF_WARN)
		return 0;
	vsnprintf(libbpf_last, sizeof(libbpf_last), fmt, ap);
	n = strlen(libbpf_last);
	while (n && (libbpf_last[n - 1] == '\n' || libbpf_last[n - 1] == ' '))
		libbpf_last[--n] = '\0';
	return 0;
}

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

static int rpbpf_before_fork(struct server *srv, char *err, size_t errlen)
{
	struct rpbpf_shared *sh;
	long long preload;
	int preload_index, rc;

	if (parse_preload(srv->cfg.workers, &preload_index, &preload, err, errlen) < 0)
		return -1;
	sh = calloc(1, sizeof(*sh));
	if (!sh) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	libbpf_set_print(libbpf_keep_last);

	sh->skel = reuseport_select_bpf__open();
	if (!sh->skel) {
		snprintf(err, errlen, "opening the BPF object (reuseport_select): %s", strerror(errno));
		goto fail;
	}
	sh->skel->rodata->targ_workers = (__u32)srv->cfg.workers;
	sh->skel->rodata->targ_slots_per_worker = (__u32)(srv->nslots / srv->cfg.workers);
	/* With --reuseport-migrate the kernel asks the program (not only its
	 * hash) where a closing listener's connections go: same selection. */
	if (srv->cfg.reuseport_migrate)
		bpf_program__set_expected_attach_type(sh->skel->progs.select_least_loaded,
						      BPF_SK_REUSEPORT_SELECT_OR_MIGRATE);
	rc = reuseport_select_bpf__load(sh->skel);
	if (rc) {
		int e = rc < 0 ? -rc : errno;

		if (e == EPERM || e == EACCES)
			snprintf(err, errlen, "needs root (CAP_BPF) to load its sk_reuseport BPF program (%s)",
				 strerror(e));
		else
			snprintf(err, errlen, "loading the BPF program (reuseport_select): %s%s%s", strerror(e),
				 libbpf_last[0] ? "; libbpf: " : "", libbpf_last);
		goto fail;
	}
	sh->prog_fd = bpf_program__fd(sh->skel->progs.select_least_loaded);
	sh->listeners_fd = bpf_map__fd(sh->skel->maps.worker_listeners);

	sh->slots_fd = bpf_map__fd(sh->skel->maps.worker_slots);
	if (map_slots(sh, err, errlen) < 0)
		goto fail;
	if (preload_index >= 0)
		__atomic_store_n(&sh->slots[preload_index].load, (__s64)preload, __ATOMIC_SEQ_CST);

	if (reuseport_setup_migrate(srv, err, errlen) < 0)
		goto fail;
	srv->vshared = sh;
	return 0;
fail:
	if (sh->slots)
		munmap(sh->slots, sh->slots_len);
	reuseport_select_bpf__destroy(sh->skel);
	free(sh);
	return -1;
}

static int rpbpf_start(struct worker *w, char *err, size_t errlen)
{
	struct rpbpf_shared *sh = w->srv->vshared;
	__u32 key = (__u32)w->slot, fd;

	if (worker_bind_own_listener(w, err, errlen) < 0)
		return -1;
	if (setsockopt(w->listen_fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, &sh->prog_fd,
		       sizeof(sh->prog_fd)) < 0) {
		snprintf(err, errlen, "setsockopt(SO_ATTACH_REUSEPORT_EBPF): %s", strerror(errno));
		return -1;
	}
	fd = (__u32)w->listen_fd;
	if (bpf_map_update_elem(sh->listeners_fd, &key, &fd, BPF_ANY) < 0) {
		snprintf(err, errlen, "putting the listener in the worker_listeners sockarray: %s",
			 strerror(errno));
		return -1;
	}
	__atomic_store_n(&sh->slots[w->slot].live, 1, __ATOMIC_SEQ_CST);
	return worker_watch_listener(w, EPOLLIN | EPOLLET, err, errlen);
}

static void rpbpf_readable(struct worker *w)
{
	worker_accept_batch(w, -1);
}

/* One of w's connections closed: uncount it. Never below 0: a connection
 * the program did not steer (it fell back to the hash) was never counted. */
static void rpbpf_conn_closed(struct worker *w)
{
	struct rpbpf_shared *sh = w->srv->vshared;
	__s64 *load = &sh->slots[w->slot].load;
	__s64 cur = __atomic_load_n(load, __ATOMIC_RELAXED);

	while (cur > 0 &&
	       !__atomic_compare_exchange_n(load, &cur, cur - 1, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		;
}

/* The worker stops taking connections (SIGTERM): no longer a candidate. */
static void rpbpf_leaving(struct worker *w)
{
	struct rpbpf_shared *sh = w->srv->vshared;

	__atomic_store_n(&sh->slots[w->slot].live, 0, __ATOMIC_SEQ_CST);
}

/* Supervisor: the worker in slot is gone; its listener left the sockarray
 * when it closed. Clear the slot so the program never picks it, and forget
 * the connections it held (they died with it). */
static void rpbpf_worker_reaped(struct server *srv, int slot, pid_t pid)
{
	struct rpbpf_shared *sh = srv->vshared;

	(void)pid;
	if (!sh || slot < 0 || slot >= MAX_SLOTS)
		return;
	__atomic_store_n(&sh->slots[slot].live, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&sh->slots[slot].load, 0, __ATOMIC_SEQ_CST);
}

/* --spawn-workers: the program and the two maps (the exec'd worker needs no
 * skeleton: it attaches the program and updates the maps by descriptor). */
static int rpbpf_spawn_fds(const struct server *srv, int *fds, int max)
{
	const struct rpbpf_shared *sh = srv->vshared;

	if (max < 3)
		return 0;
	fds[0] = sh->prog_fd;
	fds[1] = sh->listeners_fd;
	fds[2] = sh->slots_fd;
	return 3;
}

static int rpbpf_spawn_import(struct server *srv, const int *fds, int n, char *err, size_t errlen)
{
	struct rpbpf_shared *sh = calloc(1, sizeof(*sh));

	if (!sh) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (n != 3) {
		snprintf(err, errlen, "expected 3 inherited descriptors (program, sockarray, slots), got %d", n);
		free(sh);
		return -1;
	}
	sh->prog_fd = fds[0];
	sh->listeners_fd = fds[1];
	sh->slots_fd = fds[2];
	if (map_slots(sh, err, errlen) < 0) {
		free(sh);
		return -1;
	}
	srv->vshared = sh;
	return 0;
}

const struct accept_variant variant_reuseport_bpf = {
	.name = "reuseport-bpf",
	.mechanism = "per-worker SO_REUSEPORT listeners steered by a BPF sk_reuseport program to the "
		     "least-loaded worker",
	.bind_per_worker = 1,
	.knobs = KNOB_MIGRATE,
	.before_fork = rpbpf_before_fork,
	.worker_start = rpbpf_start,
	.listener_readable = rpbpf_readable,
	.conn_closed = rpbpf_conn_closed,
	.leaving = rpbpf_leaving,
	.worker_reaped = rpbpf_worker_reaped,
	.spawn_fds = rpbpf_spawn_fds,
	.spawn_import = rpbpf_spawn_import,
};
