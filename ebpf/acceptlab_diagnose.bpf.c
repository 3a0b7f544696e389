// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* acceptlab_diagnose.bpf.c: the kernel side of bin/acceptlab-diagnose's
 * attribution. For one port (targ_port, in the network namespace
 * targ_netns), the kernel says which thread accepted each connection and
 * which thread first read its bytes, and how often each waiting thread is
 * woken for nothing.
 *
 *  - on_destroy (tp_btf/tcp_destroy_sock): a followed connection is
 *    destroyed (both ends closed it, or a reset): its owner's held count
 *    drops and it is forgotten. Not inet_sock_set_state, which fires at
 *    every state change of every TCP socket on the machine (each step of
 *    both ends' handshake and close): the
 *    connections that became ESTABLISHED while watched are the loader's
 *    sum, the accepts plus what the listeners' accept queues gained
 *    (sock_diag).
 *  - exit_accept/exit_accept4 (the syscalls' exit tracepoints): a traced
 *    process's accept returned a socket whose local port is the port: it
 *    is followed from here, and its acceptor owns it. A connection or
 *    EAGAIN also closes the thread's wakeup cycle (below).
 *  - on_recv (tp_btf/sock_recv_length, every recvmsg/read on a socket; the
 *    port is compared first, so the machine's other sockets pay one read):
 *    the first read of a followed connection that returned bytes
 *    (MSG_PEEK aside) names its server, any process (the server may be
 *    another process than the acceptor: fd passing, Node's cluster); the
 *    connection moves to the server's held count. A connection of the port
 *    read by a process not traced, which no traced accept returned, is an
 *    unaccepted read.
 *  - on_waking (tp_btf/sched_waking): a traced thread is woken while it
 *    sleeps (not stopped) in a wait, which the syscall it sleeps in says (its saved
 *    registers, bpf_task_pt_regs; the numbers are the loader's,
 *    targ_wait_nr): a wakeup. A wakeup after which the thread got EAGAIN
 *    from accept and no connection before its next wakeup was wasted.
 *    The wait's own enter and exit are not traced: every syscall
 *    tracepoint a program attaches to is paid by each of the server's
 *    calls of it, and a server waits once or more per request.
 *  - Not traced either: epoll_ctl, whose tracepoint every process on the
 *    machine would pay at every call (many event loops, and clients such
 *    as wrk, make one or two per request). Who registers the listeners,
 *    and the churn of an accept mutex, the loader reads from /proc
 *    (detect.c) while it watches.
 *  - on_fork (tp_btf/sched_process_fork): a traced process forks (a
 *    supervisor respawning a worker): its child is traced too.
 *
 * Which processes are traced (the listeners' holders, with their forks) is
 * target_slots and the `targets` map beside it, which the loader fills. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "acceptlab_diagnose.h"
#include "sock.bpf.h"
#include "slots.bpf.h"
#include "sock_btf.bpf.h"
#include "waits.bpf.h"

#define MSG_PEEK 2
#define EAGAIN 11

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u16 targ_port = 0;
/* The loader's measurement switch (ACCEPTLAB_TEST_DIAG_HOOKS_ONLY): every
 * program returns at once, so what the watch costs with it is what its
 * hooks alone cost (the trace_overhead study's passive-hooks runs). */
const volatile bool targ_hooks_only = false;
const volatile __u32 targ_netns = 0;
/* The syscalls a wakeup is counted in, by this machine's numbers (-1: none). */
const volatile long targ_wait_nr[WAITS_MAX] = { -1, -1, -1, -1, -1, -1, -1, -1, -1 };

/* The traced processes: each at its place in target_slots (its tgid %
 * targ_target_slots; the value is the tgid, 0 free), or, where another
 * holds that place, in the hash `targets`. The traced threads' records
 * likewise: thread_slots at tid % targ_thread_slots, else the hash
 * `threads` (slots.bpf.h): the lookup of a thread or process not traced,
 * which is most of the machine's wakeups, costs one load, not a hash
 * lookup. The loader fills the processes before it attaches; the slots'
 * sizes are its (a test may shrink them). */
const volatile __u32 targ_thread_slots = DIAG_THREAD_SLOTS;
const volatile __u32 targ_target_slots = DIAG_TARGET_SLOTS;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DIAG_TARGET_SLOTS);
	__type(key, __u32);
	__type(value, __u64);      /* tgid, 0 free */
} target_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DIAG_MAX_TARGETS);
	__type(key, __u32);        /* tgid */
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DIAG_THREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct diag_thread_slot);
} thread_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DIAG_MAX_THREADS);
	__type(key, __u32);        /* tid */
	__type(value, struct diag_thread);
} threads SEC(".maps");

/* The followed connections. Each takes the entry of conn_slots at its
 * socket's hash (skc_hash: the 4-tuple's, which every program reads the
 * same, from the accept to the destruction), claimed by one
 * compare-and-swap of the entry's sk and freed at the destruction: no lock
 * and no allocation, where a hash's insert and delete each take a bucket's
 * lock. A connection whose entry another open connection holds goes to the
 * LRU hash `conns` (totals.spilled counts them). targ_conn_slots is the
 * array's size (the loader's, which a test may shrink). */
const volatile __u32 targ_conn_slots = DIAG_CONN_SLOTS;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DIAG_CONN_SLOTS);
	__type(key, __u32);
	__type(value, struct diag_conn_slot);
} conn_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, DIAG_MAX_CONNS);
	__type(key, __u64);        /* struct sock * */
	__type(value, struct diag_conn);
} conns SEC(".maps");

/* The totals, one copy per CPU (the loader sums them): every accept, first
 * read and destruction of the port's connections adds to them, on both
 * ends' CPUs, where one copy would move its cache line between the CPUs at
 * each. A program does not run nested in itself on a CPU (the kernel skips
 * the inner run), and each total has one program adding to it (accepted:
 * the two accept exits, and a syscall's exit never runs inside another's),
 * so a plain add loses nothing. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct diag_totals);
} totals SEC(".maps");

/* Connections read again after their first read was attributed, of those
 * not in conn_slots (followed in the hash, or not followed): a mark kept on
 * the socket itself (freed with it), made at the second read, so each later
 * read of such a connection costs the mark's lookup, not a hash lookup. A
 * connection in conn_slots needs none: its entry says it was read (the
 * entry is looked at first, and the mark's lookup is a helper's call,
 * which at every read of every keep-alive connection cost the server more
 * than the rest of the program), and a connection read once (Connection:
 * close) allocates nothing. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u8);
} first_read_seen SEC(".maps");

static const struct diag_thread zero_thread;

static __always_inline struct diag_totals *the_totals(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&totals, &zero);
}

/* The struct net of the port's namespace, once an accepted socket of it
 * has been seen (0 before): a later one's namespace is then one read, its
 * address, not two. */
__u64 net_seen = 0;

/* Whether the socket an accept returned is one of the port's, in its
 * namespace. The namespace's inode is read only until its struct net is
 * known. */
static __always_inline int accepted_ours(const struct sock *sk)
{
	__u64 net;

	if (!sk || sk->__sk_common.skc_num != targ_port)
		return 0;
	net = (__u64)sk->__sk_common.skc_net.net;
	if (!net)
		return 0;
	if (net != net_seen) {
		if (sk->__sk_common.skc_net.net->ns.inum != targ_netns)
			return 0;
		net_seen = net;
	}
	return 1;
}

/* Whether process tgid is traced (see target_slots). */
static __always_inline bool is_target(__u32 tgid)
{
	return slot_find(&target_slots, &targets, targ_target_slots, tgid, 0);
}

/* Traces process tgid from now (a traced process's child). */
static __always_inline void add_target(__u32 tgid)
{
	static const __u8 one = 1;

	slot_claim(&target_slots, &targets, targ_target_slots, tgid, 0, &one);
}

/* Thread tid's record, or NULL if it has none (see target_slots). */
static __always_inline struct diag_thread *thread_find(__u32 tid)
{
	return slot_find(&thread_slots, &threads, targ_thread_slots, tid, SLOT_REC);
}

/* Thread tid's record (made on first sight, for process tgid), or NULL.
 * Its place claimed, its tgid follows: a program that finds it between
 * the two takes it for another process's, and leaves it alone. */
static __always_inline struct diag_thread *thread_of(__u32 tid, __u32 tgid)
{
	struct diag_thread *t = slot_claim(&thread_slots, &threads, targ_thread_slots, tid, SLOT_REC, &zero_thread);

	if (t && !t->tgid)
		t->tgid = tgid;
	return t;
}

/* The entry of conn_slots at a socket's hash (skc_hash), or NULL. */
static __always_inline struct diag_conn_slot *slot_at(__u32 hash)
{
	__u32 i = targ_conn_slots ? hash % targ_conn_slots : 0;

	return bpf_map_lookup_elem(&conn_slots, &i);
}

/* The followed connection key (its struct sock *, whose skc_hash is
 * hash): its entry of conn_slots if it holds it, else the hash's, else
 * NULL; *slot is the entry it holds, or NULL. */
static __always_inline struct diag_conn *conn_of(__u64 key, __u32 hash, struct diag_conn_slot **slot)
{
	struct diag_conn_slot *s = slot_at(hash);

	if (s && s->sk == key) {
		*slot = s;
		return &s->c;
	}
	*slot = NULL;
	return bpf_map_lookup_elem(&conns, &key);
}

/* Follows the connection key from its accept: the entry at its hash,
 * claimed (free, or still named by a socket of the same address whose
 * end was not seen), else the hash. Its record starts empty. */
static __always_inline struct diag_conn *follow(__u64 key, __u32 hash, struct diag_totals *tot)
{
	struct diag_conn_slot *s = slot_at(hash);
	struct diag_conn fresh = {};
	__u64 held;

	if (s) {
		held = __sync_val_compare_and_swap(&s->sk, 0, key);
		if (held == 0 || held == key) {
			s->c = fresh;
			return &s->c;
		}
	}
	tot->spilled++;
	bpf_map_update_elem(&conns, &key, &fresh, BPF_ANY);
	return bpf_map_lookup_elem(&conns, &key);
}

/* Moves conn c's held count from its owner to tid, whose record is t (0
 * and NULL: to nobody). */
static __always_inline void own(struct diag_conn *c, __u32 tid, struct diag_thread *t)
{
	struct diag_thread *was;

	if (c->owner == tid)
		return;
	if (c->owner && (was = thread_find(c->owner)))
		__sync_fetch_and_add(&was->held, -1);
	c->owner = tid;
	if (t) {
		__s64 now = __sync_fetch_and_add(&t->held, 1) + 1;
		/* Not atomic with the add: a racing pair may record one less. */
		if (now > t->held_peak)
			t->held_peak = now;
	}
}

/* ---- connections: gone ---- */

SEC("tp_btf/tcp_destroy_sock")
int BPF_PROG(on_destroy, struct sock *sk)
{
	struct diag_conn_slot *slot;
	struct diag_totals *tot;
	struct diag_conn *c;
	__u64 key = (__u64)sk;

	if (targ_hooks_only)
		return 0;
	/* Every TCP socket's end comes here: the port first (one read; its
	 * bound port is released by now, so inet_sport's), then the followed
	 * connections (made at accept, in the namespace). */
	if (btf_sk_local_port(sk) != targ_port || !(c = conn_of(key, sk->__sk_common.skc_hash, &slot)))
		return 0;
	own(c, 0, NULL);
	if ((tot = the_totals()))
		tot->closed++;
	if (slot)
		__sync_val_compare_and_swap(&slot->sk, key, 0);
	else
		bpf_map_delete_elem(&conns, &key);
	return 0;
}

/* ---- accepts ---- */

static __always_inline int accept_exit(long ret)
{
	__u64 id;
	__u32 tgid, tid;
	struct diag_conn *c;
	struct diag_thread *t;
	struct diag_totals *tot;
	struct sock *sk;
	__u64 key;

	if (targ_hooks_only)
		return 0;
	id = bpf_get_current_pid_tgid();
	tgid = id >> 32;
	tid = (__u32)id;
	/* The holders' accepts only (a hash lookup), then the port (a walk
	 * of the task's file table). EAGAIN marks the thread's wakeup cycle
	 * (its record, if it has one: a thread never woken has no cycle). */
	if (ret < 0) {
		if (ret == -EAGAIN && (t = thread_find(tid)) && t->tgid == tgid)
			t->lost = 1;
		return 0;
	}
	if (!(t = thread_find(tid)) || t->tgid != tgid) {
		/* Not seen yet (or a tid another process had): a holder's? */
		if (!is_target(tgid) || !(t = thread_of(tid, tgid)))
			return 0;
	}
	t->won = 1;
	sk = btf_sock_of_accepted(ret);
	if (!accepted_ours(sk))
		return 0;
	key = (__u64)sk;
	if (!(tot = the_totals()))
		return 0;
	t->accepted++; /* its own thread's record, in its own context */
	tot->accepted++;
	/* Followed from here to its destruction. */
	if (!(c = follow(key, sk->__sk_common.skc_hash, tot)))
		return 0;
	c->acceptor = tid;
	c->acceptor_tgid = tgid;
	own(c, tid, t);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_accept4")
int exit_accept4(struct trace_event_raw_sys_exit *ctx) { return accept_exit(ctx->ret); }
SEC("tracepoint/syscalls/sys_exit_accept")
int exit_accept(struct trace_event_raw_sys_exit *ctx) { return accept_exit(ctx->ret); }

/* ---- the first read ---- */

/* Whether a read of ret bytes from sk was its first with bytes: what has
 * been read of it (what arrived, less what waits to be read) is ret. */
static __always_inline bool first_bytes_read(struct sock *sk, int ret)
{
	struct tcp_sock *tp = SOCK_AS(struct tcp_sock, sk);
	__u64 arrived = tp->bytes_received;
	__u32 waiting = tp->rcv_nxt - tp->copied_seq;

	return arrived - waiting == (__u64)ret;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(on_recv, struct sock *sk, int ret, int flags)
{
	__u64 id, key = (__u64)sk;
	__u32 tgid, tid;
	struct diag_conn_slot *slot;
	struct diag_conn *c;
	struct diag_thread *t, *acc;
	struct diag_totals *tot;

	if (targ_hooks_only || ret <= 0 || (flags & MSG_PEEK) || !sk || sk->__sk_common.skc_num != targ_port)
		return 0;
	/* A followed connection in its entry: its first read, or a later one
	 * (no mark asked). Else a later read of one marked, else the hash. */
	slot = slot_at(sk->__sk_common.skc_hash);
	if (slot && slot->sk == key) {
		c = &slot->c;
		if (c->server)
			return 0; /* a later read: its first was attributed */
	} else if (bpf_sk_storage_get(&first_read_seen, sk, 0, 0)) {
		return 0; /* a later read: its first was attributed */
	} else {
		c = bpf_map_lookup_elem(&conns, &key);
	}
	if (!c || c->server) {
		/* Marked, so that its later reads cost a pointer chase. */
		bpf_sk_storage_get(&first_read_seen, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		if (c || btf_sk_netns(sk) != targ_netns)
			return 0;
		/* Not followed: accepted before the trace began, or by a
		 * process not traced (another server's, or --pid left its
		 * acceptor out). Its first bytes read by a process not traced
		 * say the second. */
		id = bpf_get_current_pid_tgid();
		tgid = id >> 32;
		if (first_bytes_read(sk, ret) && !is_target(tgid) && (tot = the_totals()))
			tot->unaccepted_reads++;
		return 0;
	}
	if (btf_sk_netns(sk) != targ_netns || !(tot = the_totals()))
		return 0;
	id = bpf_get_current_pid_tgid();
	tgid = id >> 32;
	tid = (__u32)id;
	if (!(t = thread_of(tid, tgid)))
		return 0;
	c->server = tid;
	/* t is the reading thread's own record, in its own context: plain
	 * adds (the acceptor's, another thread's, takes an atomic one). */
	t->served++;
	tot->served++;
	if (tid != c->acceptor) {
		tot->handoffs++;
		t->received++;
		if (tgid != c->acceptor_tgid)
			t->received_cross++;
		if ((acc = thread_find(c->acceptor)))
			__sync_fetch_and_add(&acc->handed_off, 1);
	}
	own(c, tid, t);
	return 0;
}

/* ---- wakeups ---- */

SEC("tp_btf/sched_waking")
int BPF_PROG(on_waking, struct task_struct *p)
{
	__u32 tgid, tid;
	struct diag_thread *t;

	if (targ_hooks_only)
		return 0;
	tgid = p->tgid;
	tid = p->pid;
	/* Every wakeup on the machine comes here: a thread seen already, or
	 * one of a traced process not seen yet (two loads for the rest). */
	t = thread_find(tid);
	if (!t) {
		if (!is_target(tgid) || !(t = thread_of(tid, tgid)))
			return 0;
	}
	if (t->tgid != tgid)
		return 0; /* a tid reused by another process */
	if (!waking_in_wait(p, targ_wait_nr))
		return 0;
	/* The previous cycle ends here. The thread sleeps, so its own
	 * accepts do not race these stores, and the kernel wakes a task
	 * under its pi_lock, so two wakings of it do not race them either. */
	if (cycle_wasted(t))
		t->wasted++;
	t->woken = 1;
	t->won = t->lost = 0;
	t->wakeups++;
	return 0;
}

/* A traced process forks (a supervisor respawning a worker): trace the child. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid, ctgid;

	if (targ_hooks_only)
		return 0;
	ptgid = parent->tgid;
	ctgid = child->tgid;
	if (ptgid != ctgid && is_target(ptgid))
		add_target(ctgid);
	return 0;
}
