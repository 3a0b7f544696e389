/* load.c: the balancing variants' load accounting (load.h), kernel or user.
 *
 * Kernel accounting loads ebpf/worker_load.bpf.c: count_state is attached
 * here (the link lives in the supervisor, so as long as the server does);
 * the sk_reuseport program is loaded only for reuseport-bpf, which attaches
 * it to its group (load_join). User accounting maps a memfd page with the
 * same records. Either way every process of the server (forked, or exec'd
 * with the descriptors) maps the records MAP_SHARED and updates them with
 * atomic operations, never a syscall, except for the tag a kernel-accounted
 * connection gets at admission (one map update by fd). */
#include "load.h"
#include "server.h"
#include "worker_load.h"
#include "worker_load.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TEST_MAX_TAGS_ENV "ACCEPTLAB_TEST_MAX_TAGS"

_Static_assert(WORKER_LOAD_MAX_SLOTS == MAX_SLOTS, "ebpf/worker_load.h and servers/server.h disagree on slots");
_Static_assert(WORKER_LOAD_MAX_INDEXES == MAX_WORKERS, "ebpf/worker_load.h and servers/server.h disagree on workers");
_Static_assert(WORKER_LOAD_MAX_TAGS == 4096, "main.c's ACCEPTLAB_TEST_MAX_TAGS help names the default");
_Static_assert(sizeof(struct load_slot) % 8 == 0, "an mmapped BPF array's elements are 8-byte aligned");

struct load_account {
	int kernel;
	int steer;
	int giving; /* LOAD_GIVING with kernel accounting */
	struct worker_load_bpf *skel; /* the supervisor's (NULL in an exec'd worker) */
	struct bpf_link *link, *destroy_link, *exit_link, *read_link;
	int slots_fd, owner_fd, listeners_fd, prog_fd; /* kernel */
	int read_prog_fd; /* kernel, tagging at first reads: tag_on_read's program (else -1) */
	int page_fd;                                   /* user */
	struct load_slot *slots;
	size_t slots_len;
	char note[ERRLEN]; /* why user accounting, when kernel was wanted but could not be had */
};

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

static size_t slots_bytes(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return (MAX_SLOTS * sizeof(struct load_slot) + (size_t)page - 1) & ~((size_t)page - 1);
}

static int map_slots(struct load_account *la, int fd, char *err, size_t errlen)
{
	la->slots_len = slots_bytes();
	la->slots = mmap(NULL, la->slots_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (la->slots == MAP_FAILED) {
		snprintf(err, errlen, "mmap of the load records: %s", strerror(errno));
		la->slots = NULL;
		return -1;
	}
	return 0;
}

static int open_user(struct load_account *la, char *err, size_t errlen)
{
	la->kernel = 0;
	/* A memfd rather than an anonymous mapping: the same page survives
	 * --spawn-workers' exec. */
	la->page_fd = memfd_create("acceptlab-load", MFD_CLOEXEC);
	if (la->page_fd < 0 || ftruncate(la->page_fd, (off_t)slots_bytes()) < 0) {
		snprintf(err, errlen, "memfd for the load records: %s", strerror(errno));
		return -1;
	}
	return map_slots(la, la->page_fd, err, errlen);
}

/* Whether the kernel tags connections at their first read (ebpf/
 * worker_load.bpf.c: tag_on_read) rather than the worker by fd, which saves
 * each connection the worker's map update, a syscall. */
static int tags_on_read(const struct load_account *la)
{
	return la->read_prog_fd >= 0;
}

static int open_kernel(struct load_account *la, const struct server *srv, unsigned flags, char *err, size_t errlen)
{
	/* Tagging at first reads: for hand-offs between worker processes
	 * (fdpass), whose reads say by their process whose they are. Tried
	 * first; a kernel without sock_recv_length (before 6.3) fails the
	 * load, which is then made again without it (asking the kernel's BTF
	 * beforehand would parse it a second time at every start). */
	int on_read = (flags & LOAD_GIVING) && !srv->cfg.threads;
	struct worker_load_bpf *skel;
	struct stat st;
	int rc;

	libbpf_set_print(libbpf_keep_last);
again:
	skel = worker_load_bpf__open();
	if (!skel) {
		snprintf(err, errlen, "opening the BPF object (worker_load): %s", strerror(errno));
		return -1;
	}
	skel->rodata->targ_workers = (__u32)srv->cfg.workers;
	skel->rodata->targ_slots_per_worker = (__u32)(srv->nslots / srv->cfg.workers);
	skel->rodata->targ_port = (__u32)srv->bound_port;
	if (stat("/proc/self/ns/net", &st) == 0)
		skel->rodata->targ_netns = (__u32)st.st_ino;
	skel->rodata->targ_steer = (flags & LOAD_STEER) != 0;
	skel->rodata->targ_tag_on_read = on_read;
	skel->rodata->targ_giving = (flags & LOAD_GIVING) != 0;
	if (!on_read) {
		bpf_program__set_autoload(skel->progs.tag_on_read, false);
		/* socket storage holds the tags */
		bpf_map__set_autocreate(skel->maps.conn_tags, false);
		bpf_map__set_autocreate(skel->maps.tags_in_storage, false);
	} else if (getenv(TEST_MAX_TAGS_ENV)) {
		/* Fewer entries: more connections find theirs taken, and keep
		 * their tags in socket storage (the test). */
		__u32 n = (__u32)env_long(TEST_MAX_TAGS_ENV, WORKER_LOAD_MAX_TAGS, 1, WORKER_LOAD_MAX_TAGS);

		bpf_map__set_max_entries(skel->maps.conn_tags, n);
		skel->rodata->targ_tags = n;
	}
	/* Only fdpass's senders record what they give: the others would hold
	 * the program's descriptors for nothing. */
	if (!(flags & LOAD_GIVING)) {
		bpf_program__set_autoload(skel->progs.count_destroy, false);
		bpf_program__set_autoload(skel->progs.mark_exited, false);
	}
	if (!(flags & LOAD_STEER)) {
		bpf_program__set_autoload(skel->progs.select_least_loaded, false);
		bpf_map__set_max_entries(skel->maps.syn_owner, 1);
	} else if (flags & LOAD_MIGRATE) {
		/* The kernel then asks the program (not only its hash) where a
		 * closing listener's requests go: the same selection. */
		bpf_program__set_expected_attach_type(skel->progs.select_least_loaded,
						      BPF_SK_REUSEPORT_SELECT_OR_MIGRATE);
	}
	rc = worker_load_bpf__load(skel);
	if (rc) {
		int e = rc < 0 ? -rc : errno;

		if (on_read && e != EPERM && e != EACCES) {
			worker_load_bpf__destroy(skel);
			on_read = 0;
			goto again;
		}
		if (e == EPERM || e == EACCES)
			snprintf(err, errlen, "needs root (CAP_BPF) to load its BPF programs (%s)", strerror(e));
		else
			snprintf(err, errlen, "loading the BPF object (worker_load): %s%s%.160s", strerror(e),
				 libbpf_last[0] ? "; libbpf: " : "", libbpf_last);
		worker_load_bpf__destroy(skel);
		return -1;
	}
	la->link = bpf_program__attach(skel->progs.count_state);
	if (!la->link) {
		snprintf(err, errlen, "attaching to tp_btf/inet_sock_set_state: %s", strerror(errno));
		worker_load_bpf__destroy(skel);
		return -1;
	}
	if ((flags & LOAD_GIVING) && !(la->destroy_link = bpf_program__attach(skel->progs.count_destroy)))
		snprintf(err, errlen, "attaching to tp_btf/tcp_destroy_sock: %s", strerror(errno));
	else if ((flags & LOAD_GIVING) && !(la->exit_link = bpf_program__attach(skel->progs.mark_exited)))
		snprintf(err, errlen, "attaching to tp_btf/sched_process_exit: %s", strerror(errno));
	else if (on_read && !(la->read_link = bpf_program__attach(skel->progs.tag_on_read)))
		snprintf(err, errlen, "attaching to tp_btf/sock_recv_length: %s", strerror(errno));
	else
		goto attached;
	bpf_link__destroy(la->exit_link);
	bpf_link__destroy(la->destroy_link);
	bpf_link__destroy(la->link);
	la->link = la->destroy_link = la->exit_link = NULL;
	worker_load_bpf__destroy(skel);
	return -1;
attached:
	la->skel = skel;
	la->kernel = 1;
	la->giving = (flags & LOAD_GIVING) != 0;
	la->slots_fd = bpf_map__fd(skel->maps.slots);
	la->owner_fd = bpf_map__fd(skel->maps.conn_owner);
	la->listeners_fd = bpf_map__fd(skel->maps.worker_listeners);
	la->prog_fd = la->steer ? bpf_program__fd(skel->progs.select_least_loaded) : -1;
	la->read_prog_fd = on_read ? bpf_program__fd(skel->progs.tag_on_read) : -1;
	return map_slots(la, la->slots_fd, err, errlen);
}

/* Reads LOAD_ACCOUNTING_ENV: 'k', 'u', or 0 (unset); -1 + err if malformed. */
static int wanted(char *err, size_t errlen)
{
	const char *v = getenv(LOAD_ACCOUNTING_ENV);

	if (!v)
		return 0;
	if (strcmp(v, "kernel") == 0)
		return 'k';
	if (strcmp(v, "user") == 0)
		return 'u';
	snprintf(err, errlen, LOAD_ACCOUNTING_ENV "=%s: expected kernel or user", v);
	return -1;
}

struct load_account *load_open(const struct server *srv, unsigned flags, char *err, size_t errlen)
{
	struct load_account *la = calloc(1, sizeof(*la));
	int want = wanted(err, errlen);

	if (!la || want < 0) {
		if (!la)
			snprintf(err, errlen, "out of memory");
		free(la);
		return NULL;
	}
	la->steer = (flags & LOAD_STEER) != 0;
	la->page_fd = la->slots_fd = la->owner_fd = la->listeners_fd = la->prog_fd = la->read_prog_fd = -1;
	if (want == 'u' && (flags & LOAD_NEED_KERNEL)) {
		snprintf(err, errlen, LOAD_ACCOUNTING_ENV "=user: this variant counts in the kernel only");
		free(la);
		return NULL;
	}
	if (want != 'u') {
		char why[ERRLEN];

		if (open_kernel(la, srv, flags, why, sizeof(why)) == 0)
			return la;
		if (want == 'k' || (flags & LOAD_NEED_KERNEL) || la->kernel) {
			snprintf(err, errlen, "%s", why);
			free(la);
			return NULL;
		}
		snprintf(la->note, sizeof(la->note), "kernel accounting unavailable: %.200s", why);
	}
	if (open_user(la, err, errlen) < 0) {
		free(la);
		return NULL;
	}
	return la;
}

const char *load_accounting(const struct load_account *la)
{
	return la->kernel ? "kernel" : "user";
}

const char *load_note(const struct load_account *la)
{
	return la->note[0] ? la->note : NULL;
}

int load_spawn_fds(const struct load_account *la, int *fds, int max)
{
	int n = 0;

	if (!la->kernel) {
		if (max >= 1)
			fds[n++] = la->page_fd;
		return n;
	}
	if (max < 5)
		return 0;
	fds[n++] = la->slots_fd;
	fds[n++] = la->owner_fd;
	fds[n++] = la->listeners_fd;
	if (la->steer)
		fds[n++] = la->prog_fd;
	/* Says that the kernel tags at first reads (an exec'd worker, maybe
	 * of another build, must not judge that for itself: a worker that
	 * tagged by fd as well would uncount a marked connection twice); a
	 * worker too old to expect it fails to start instead. */
	if (tags_on_read(la))
		fds[n++] = la->read_prog_fd;
	return n;
}

struct load_account *load_import(const struct server *srv, unsigned flags, const int *fds, int n, char *err,
				 size_t errlen)
{
	struct load_account *la = calloc(1, sizeof(*la));
	int steer = (flags & LOAD_STEER) != 0, on_read = (flags & LOAD_GIVING) && n == 4 + steer;

	(void)srv;
	if (!la) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	la->steer = steer;
	la->page_fd = la->slots_fd = la->owner_fd = la->listeners_fd = la->prog_fd = la->read_prog_fd = -1;
	if (n == 1) {
		la->page_fd = fds[0];
	} else if (n == 3 + steer || on_read) {
		la->kernel = 1;
		la->giving = (flags & LOAD_GIVING) != 0;
		la->slots_fd = fds[0];
		la->owner_fd = fds[1];
		la->listeners_fd = fds[2];
		la->prog_fd = steer ? fds[3] : -1;
		la->read_prog_fd = on_read ? fds[3 + steer] : -1; /* as the supervisor loaded it (load_spawn_fds) */
	} else {
		snprintf(err, errlen, "expected 1 (user) or %d%s (kernel) load accounting descriptors, got %d",
			 3 + steer, flags & LOAD_GIVING ? " or 1 more" : "", n);
		free(la);
		return NULL;
	}
	if (map_slots(la, la->kernel ? la->slots_fd : la->page_fd, err, errlen) < 0) {
		free(la);
		return NULL;
	}
	return la;
}

void load_slot_restart(struct load_account *la, int slot)
{
	struct load_slot *s = &la->slots[slot];

	/* Generation first: a decrement for a connection of the old worker
	 * that the kernel is making right now no longer applies. */
	__atomic_add_fetch(&s->gen, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->held, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->giving, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->exited, 0, __ATOMIC_SEQ_CST);
	for (int i = 0; i < SYN_BUCKETS; i++)
		__atomic_store_n(&s->syn[i], 0, __ATOMIC_SEQ_CST);
}

void load_slot_owned(struct load_account *la, int slot, pid_t pid)
{
	__atomic_store_n(&la->slots[slot].owner, (__u32)pid, __ATOMIC_SEQ_CST);
}

/* fdpass, kernel accounting: waits, at most GIVERS_WAIT_MS, while a
 * sender's giving record names slot, whose worker has died. A sender clears
 * it only after closing its own copy of the connection, and if the dead
 * worker had taken that connection, the sender's close was the last one and
 * counted in the slot's died_held (ebpf/worker_load.bpf.c, given_to_dead).
 * A sender is there for the few system calls between its credit and its
 * close; the bound only keeps a stopped one from holding up the reap. */
#define GIVERS_WAIT_MS 500
static void wait_for_givers(struct load_account *la, int slot)
{
	struct timespec tick = { 0, 200 * 1000 };

	for (int i = 0; i < GIVERS_WAIT_MS * 5; i++) {
		int giving = 0;

		for (int k = 0; k < MAX_SLOTS && !giving; k++) {
			uint64_t g = __atomic_load_n(&la->slots[k].giving, __ATOMIC_SEQ_CST);

			/* A sender that is itself dying closes nothing more but
			 * by its exit, and its record stays until its own reap. */
			giving = k != slot && g >> 48 == (uint64_t)slot + 1 &&
				 !__atomic_load_n(&la->slots[k].exited, __ATOMIC_SEQ_CST);
		}
		if (!giving)
			return;
		nanosleep(&tick, NULL);
	}
}

void load_slot_reaped(struct load_account *la, int slot, int index, pid_t pid)
{
	struct load_slot *s = &la->slots[slot];
	int64_t held;

	/* Reaped: its exit (and every close it made) is over. Kernel: what
	 * its exit closed while ESTABLISHED, and the hand-offs it had taken
	 * that their senders closed after it (held may still carry a raise
	 * whose tag it never made, for a connection counted there too). User:
	 * what it had admitted and not closed. */
	if (la->kernel && la->giving)
		wait_for_givers(la, slot);
	held = la->kernel ? (int64_t)__atomic_load_n(&s->died_held, __ATOMIC_SEQ_CST)
			  : __atomic_load_n(&s->held, __ATOMIC_SEQ_CST);

	emit_line(STDOUT_FILENO, "{\"event\":\"slot_restarted\",\"index\":%d,\"slot\":%d,\"pid\":%d,"
		  "\"held_at_death\":%lld,\"inflight\":%lld}", index, slot, (int)pid, (long long)held,
		  (long long)load_inflight(la, slot));
	__atomic_store_n(&s->owner, 0, __ATOMIC_SEQ_CST);
	load_slot_restart(la, slot);
	__atomic_store_n(&s->died_held, 0, __ATOMIC_SEQ_CST);
}

void load_credit(struct load_account *la, int slot, int delta)
{
	__atomic_add_fetch(&la->slots[slot].credited, delta, __ATOMIC_SEQ_CST);
}

void load_give(struct load_account *la, int from, int to, uint32_t peer_addr, uint16_t peer_port)
{
	load_credit(la, to, 1);
	/* After the credit: a kill between the two leaves the credit one high
	 * (a leaver waits for it), never one low (a leaver would stop waiting
	 * for a hand-off still on its way). */
	if (la->giving)
		__atomic_store_n(&la->slots[from].giving,
				 (uint64_t)(to + 1) << 48 | (uint64_t)peer_port << 32 | peer_addr, __ATOMIC_SEQ_CST);
}

void load_given(struct load_account *la, int from)
{
	if (la->giving)
		__atomic_store_n(&la->slots[from].giving, 0, __ATOMIC_SEQ_CST);
}

void load_give_back(struct load_account *la, int from, int to)
{
	load_given(la, from); /* first, for the same reason as in load_give */
	load_credit(la, to, -1);
}

void load_hold(struct load_account *la, int slot)
{
	__atomic_add_fetch(&la->slots[slot].held, 1, __ATOMIC_SEQ_CST);
}

void load_unhold(struct load_account *la, int slot)
{
	__atomic_sub_fetch(&la->slots[slot].held, 1, __ATOMIC_SEQ_CST);
}

void load_tag(struct load_account *la, int slot, int fd)
{
	struct load_slot *s = &la->slots[slot];
	struct conn_tag tag = { 0 };

	if (!la->kernel || tags_on_read(la))
		return; /* user accounting tags nothing; tag_on_read: the kernel tags it at its first read */
	tag.word = TAG_WORD(slot, __atomic_load_n(&s->gen, __ATOMIC_SEQ_CST), TAG_COUNTED);
	/* Fails (EEXIST) if the kernel left a marker: the connection left
	 * ESTABLISHED before this, so it does not count. */
	if (bpf_map_update_elem(la->owner_fd, &fd, &tag, BPF_NOEXIST) != 0)
		__atomic_sub_fetch(&s->held, 1, __ATOMIC_SEQ_CST);
}

int load_retired(const struct load_account *la, int slot, uint64_t ticket)
{
	return (uint32_t)__atomic_load_n(&la->slots[slot].retired, __ATOMIC_SEQ_CST) == (uint32_t)ticket;
}

void load_retire(struct load_account *la, int slot, uint64_t ticket)
{
	struct load_slot *s = &la->slots[slot];
	/* A load and a store, not a read-modify-write: one process writes the
	 * word at a time (load.h), and the store is what a kill cannot split. */
	uint64_t was = __atomic_load_n(&s->retired, __ATOMIC_SEQ_CST);

	__atomic_store_n(&s->retired, ((was >> 32) + 1) << 32 | (uint32_t)ticket, __ATOMIC_SEQ_CST);
}

void load_admit(struct load_account *la, int slot, int fd)
{
	load_hold(la, slot);
	load_retire(la, slot, 0); /* after the raise: a reader never sees the connection in neither */
	load_tag(la, slot, fd);
}

void load_closed(struct load_account *la, int slot)
{
	if (!la->kernel)
		__atomic_sub_fetch(&la->slots[slot].held, 1, __ATOMIC_SEQ_CST);
}

void load_closed_unread(struct load_account *la, int slot)
{
	if (!la->kernel || tags_on_read(la))
		__atomic_sub_fetch(&la->slots[slot].held, 1, __ATOMIC_SEQ_CST);
}

static uint32_t epoch_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns()'s clock */
	return (uint32_t)(((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) >> SYN_EPOCH_SHIFT);
}

static int64_t syn_window(const struct load_slot *s)
{
	uint32_t now = epoch_now();
	int64_t sum = 0;

	for (int i = 0; i < SYN_BUCKETS; i++) {
		uint64_t v = __atomic_load_n(&s->syn[i], __ATOMIC_RELAXED);

		if (now - (uint32_t)(v >> 32) < SYN_WINDOW)
			sum += (uint32_t)v;
	}
	return sum;
}

int64_t load_of(const struct load_account *la, int slot)
{
	const struct load_slot *s = &la->slots[slot];

	return __atomic_load_n(&s->held, __ATOMIC_SEQ_CST) + load_inflight(la, slot) +
	       (la->steer ? syn_window(s) : 0);
}

int64_t load_inflight(const struct load_account *la, int slot)
{
	const struct load_slot *s = &la->slots[slot];

	/* credited first: the leaving handshake's read (load.h) is of the
	 * senders' word. */
	return WORKER_LOAD_INFLIGHT(__atomic_load_n(&s->credited, __ATOMIC_SEQ_CST),
				    __atomic_load_n(&s->retired, __ATOMIC_SEQ_CST));
}

int load_join(struct load_account *la, int slot, int listen_fd, char *err, size_t errlen)
{
	struct load_slot *s = &la->slots[slot];
	__u32 key = (__u32)slot, fd = (__u32)listen_fd;
	struct conn_tag tag = {
		.word = TAG_WORD(slot, __atomic_load_n(&s->gen, __ATOMIC_SEQ_CST), 0),
		.listener = 1,
	};

	if (setsockopt(listen_fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, &la->prog_fd, sizeof(la->prog_fd)) < 0) {
		snprintf(err, errlen, "setsockopt(SO_ATTACH_REUSEPORT_EBPF): %s", strerror(errno));
		return -1;
	}
	if (bpf_map_update_elem(la->listeners_fd, &key, &fd, BPF_ANY) < 0) {
		snprintf(err, errlen, "putting the listener in the worker_listeners sockarray: %s", strerror(errno));
		return -1;
	}
	if (bpf_map_update_elem(la->owner_fd, &listen_fd, &tag, BPF_ANY) < 0) {
		snprintf(err, errlen, "tagging the listener in conn_owner: %s", strerror(errno));
		return -1;
	}
	__atomic_store_n(&s->live, 1, __ATOMIC_SEQ_CST);
	return 0;
}

void load_leave(struct load_account *la, int slot)
{
	__atomic_store_n(&la->slots[slot].live, 0, __ATOMIC_SEQ_CST);
}

void load_preload(struct load_account *la, int slot, int64_t n)
{
	__atomic_store_n(&la->slots[slot].held, n, __ATOMIC_SEQ_CST);
}

int load_describe(const struct load_account *la, int nslots, int workers, load_slot_members extra, void *ctx,
		  char *buf, size_t len)
{
	size_t off = (size_t)snprintf(buf, len, "\"accounting\":\"%s\",\"slots\":[", load_accounting(la));

	for (int i = 0; i < nslots && off < len; i++) {
		const struct load_slot *s = &la->slots[i];

		off += (size_t)snprintf(buf + off, len - off, "%s{\"slot\":%d,\"index\":%d,", i ? "," : "", i,
					i % workers);
		if (extra && off < len)
			off += (size_t)extra(ctx, i, buf + off, len - off);
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "\"load\":%lld,\"held\":%lld,\"inflight\":%lld",
						(long long)load_of(la, i),
						(long long)__atomic_load_n(&s->held, __ATOMIC_SEQ_CST),
						(long long)load_inflight(la, i));
		if (la->steer && off < len)
			off += (size_t)snprintf(buf + off, len - off, ",\"syn\":%lld,\"live\":%s",
						(long long)syn_window(s),
						__atomic_load_n(&s->live, __ATOMIC_SEQ_CST) ? "true" : "false");
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "}");
	}
	if (off < len)
		off += (size_t)snprintf(buf + off, len - off, "]");
	return off < len ? (int)off : (int)len - 1;
}
