// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* acceptlab_trace.bpf.c: the kernel side of bin/acceptlab-trace. It says
 * why each worker won: who was woken for a new connection, who reached
 * accept() first, who got EAGAIN, and on which CPUs.
 *
 * Only tracepoints: the syscalls' exits (accept, accept4, epoll_wait,
 * epoll_pwait, epoll_pwait2: they fire for those syscalls alone) and
 * tp_btf for sched_waking, sched_process_fork, and with --timeline
 * sched_switch and inet_sock_set_state. No kprobes or fentry (unavailable
 * here). Each hook runs for every task that hits it, so the tracer
 * attaches few: no syscall's entry (whether a woken thread sleeps in a
 * wait is told by the syscall it sleeps in, waits.bpf.h; a wakeup's
 * latency runs to the first accept to return after it), and
 * inet_sock_set_state, which fires at every state change of every TCP
 * socket on the machine (each step of both ends' handshake and close),
 * for the timeline alone, whose story
 * begins at ESTABLISHED; so does the walk of the accepting task's file
 * table that pairs a won accept with its ESTABLISHED.
 *
 * The traced processes are those whose tgid is in target_slots or the
 * `targets` hash beside it (filled by the loader; a fork of a traced
 * process is added here, so respawned workers are followed). A worker is
 * one thread (tid). Per tid, one record (worker_slots, or the `workers`
 * hash beside it) holds its cycle, from a wait's return to the next's
 * (its accepts, then the wakeup that ends the next wait), and its stats,
 * what the loader prints; the loader closes the cycles still open when
 * the trace ends (trace_cycle_empty, trace_cycle_wasted).
 *
 * The counts the thread's own waits' and accepts' exits write have one
 * writer, the thread in its own context (it runs on one CPU at a time, and
 * a program does not run nested in itself on a CPU), so they are added to
 * plainly, not by a locked instruction at every event. Its wakers' counts
 * (wakeups, waker_cpu) stay atomic: a thread that wakes itself (its own
 * wait's timer) takes no lock, so a waker on another CPU can race it for
 * the same wait, both finding wake_pending clear; each atomic add then
 * counts, and wakeups stays the sum of waker_cpu, where a plain add could
 * lose one of the two and leave them apart. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "acceptlab_trace.h"
#include "slots.bpf.h"
#include "sock.bpf.h"
#include "waits.bpf.h"

#define EAGAIN 11

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile bool targ_timeline = false;
/* The waits (epoll's and accept's) by this machine's numbers (waits.h). */
const volatile long targ_wait_nr[WAITS_MAX] = { -1, -1, -1, -1, -1, -1, -1, -1, -1 };

struct conn_seen {
	__u64 est_ns;
	__u32 est_cpu;
	__u32 pad;
};

/* The traced processes at their places in target_slots, the traced
 * threads' records at theirs in worker_slots, each with a hash beside it
 * for an id whose place another holds (slots.bpf.h): a wakeup of a thread
 * not traced, most of the machine's, costs two loads, not two hash
 * lookups. The loader fills the processes before it attaches; the
 * arrays' sizes are its (a test may shrink them). */
const volatile __u32 targ_target_slots = TRACE_TARGET_SLOTS;
const volatile __u32 targ_worker_slots = TRACE_WORKER_SLOTS;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TRACE_TARGET_SLOTS);
	__type(key, __u32);
	__type(value, __u64); /* tgid, 0 free */
} target_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACE_MAX_TARGETS);
	__type(key, __u32);   /* tgid */
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACE_MAX_PORTS);
	__type(key, __u16);   /* local port, host order */
	__type(value, __u8);
} ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TRACE_WORKER_SLOTS);
	__type(key, __u32);
	__type(value, struct trace_worker_slot);
} worker_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACE_MAX_WORKERS);
	__type(key, __u32);   /* tid */
	__type(value, struct trace_worker);
} workers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);   /* struct sock * */
	__type(value, struct conn_seen);
} conns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

static const struct trace_worker zero_worker;

static __always_inline bool traced_tgid(__u32 tgid)
{
	return slot_find(&target_slots, &targets, targ_target_slots, tgid, 0);
}

/* Thread tid's record, or NULL if it has none. */
static __always_inline struct trace_worker *worker_find(__u32 tid)
{
	return slot_find(&worker_slots, &workers, targ_worker_slots, tid, SLOT_REC);
}

/* Thread tid's cycle and stats, made on first sight; NULL if its process
 * (tgid) is not traced or the hash beside the array is full. A traced
 * thread is found by one load and a compare; the processes are asked
 * only for a thread seen for the first time (or a tid another process
 * had: its record starts again). */
static __always_inline struct trace_worker *worker_of(__u32 tid, __u32 tgid)
{
	struct trace_worker *w = worker_find(tid);

	if (w && w->c.tgid == tgid)
		return w;
	if (!traced_tgid(tgid))
		return NULL;
	if (!w)
		w = slot_claim(&worker_slots, &workers, targ_worker_slots, tid, SLOT_REC, &zero_worker);
	if (!w)
		return NULL;
	if (w->c.tgid) {
		/* Another process's thread had this tid: start again. */
		volatile __u64 *word = (volatile __u64 *)w; /* a loop, not a memset */

		for (int k = 0; k < sizeof(*w) / sizeof(__u64); k++)
			word[k] = 0;
	}
	w->c.tgid = w->s.tgid = tgid;
	return w;
}

/* The calling thread's record; NULL if it is not traced. */
static __always_inline struct trace_worker *current_worker(__u32 *tid_out)
{
	__u64 id = bpf_get_current_pid_tgid();

	*tid_out = (__u32)id;
	return worker_of((__u32)id, id >> 32);
}

static __always_inline __u32 log2_us(__u64 ns)
{
	__u64 us = ns / 1000;
	__u32 slot = 0;

	while (us > 1 && slot < TRACE_HIST_SLOTS - 1) {
		us >>= 1;
		slot++;
	}
	return slot;
}

static __always_inline void emit(__u32 kind, __u32 tid, __s64 ret, __u64 sk)
{
	struct accept_event *e;

	if (!targ_timeline)
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return;
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = bpf_ktime_get_ns();
	e->kind = kind;
	e->cpu = bpf_get_smp_processor_id();
	e->tid = tid;
	e->tgid = bpf_get_current_pid_tgid() >> 32;
	e->ret = ret;
	e->sk = sk;
	bpf_ringbuf_submit(e, 0);
}

/* ---- waits ---- */

/* A wait returned: the cycle that began at the previous return ends, and
 * one begins, woken if this wait's sleep was woken. */
static __always_inline int wait_exit(void)
{
	struct trace_worker *w;
	struct worker_stats *st;
	struct cycle *c;
	__u32 tid;

	if (!(w = current_worker(&tid)))
		return 0;
	c = &w->c;
	st = &w->s;
	if (trace_cycle_empty(c))
		st->empty_returns++;
	if (trace_cycle_wasted(c))
		st->wasted++;
	c->woken = c->wake_pending;
	c->wake_pending = c->accept_seen = c->won = c->lost = 0;
	c->returned = 1;
	st->wait_returns++;
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_epoll_wait")
int exit_epoll_wait(void *ctx) { return wait_exit(); }
SEC("tracepoint/syscalls/sys_exit_epoll_pwait")
int exit_epoll_pwait(void *ctx) { return wait_exit(); }
SEC("tracepoint/syscalls/sys_exit_epoll_pwait2")
int exit_epoll_pwait2(void *ctx) { return wait_exit(); }

/* ---- accepts ---- */

static __always_inline int accept_exit(long ret)
{
	struct trace_worker *w;
	struct worker_stats *st;
	struct cycle *c;
	__u32 tid, cpu = bpf_get_smp_processor_id();
	__u64 sk = 0;

	if (!(w = current_worker(&tid)))
		return 0;
	c = &w->c;
	st = &w->s;
	if (c->wake_pending) {
		/* Woken inside this accept: a blocking accept. */
		c->woken = 1;
		c->wake_pending = c->accept_seen = 0;
	}
	if (c->woken && !c->accept_seen) {
		/* The first accept to return since the wakeup: its latency. */
		__u32 slot = log2_us(bpf_ktime_get_ns() - c->wake_ns);
		if (slot < TRACE_HIST_SLOTS)
			st->wake_to_accept[slot]++;
	}
	c->accept_seen = 1;
	if (ret >= 0) {
		struct conn_seen *seen;

		c->won = 1;
		st->won++;
		if (cpu < TRACE_MAX_CPUS)
			st->accept_cpu[cpu]++;
		if (!targ_timeline)
			return 0; /* no ESTABLISHED to pair it with, no event */
		sk = sock_of_fd(ret);
		seen = sk ? bpf_map_lookup_elem(&conns, &sk) : NULL;
		if (seen) {
			__u32 ecpu = seen->est_cpu;
			st->established++;
			if (ecpu < TRACE_MAX_CPUS)
				st->est_cpu[ecpu]++;
			bpf_map_delete_elem(&conns, &sk);
		}
	} else if (ret == -EAGAIN) {
		c->lost = 1;
		st->lost++;
	}
	emit(EV_ACCEPT, tid, ret, sk);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_accept4")
int exit_accept4(struct trace_event_raw_sys_exit *ctx) { return accept_exit(ctx->ret); }
SEC("tracepoint/syscalls/sys_exit_accept")
int exit_accept(struct trace_event_raw_sys_exit *ctx) { return accept_exit(ctx->ret); }

/* ---- the scheduler ---- */

SEC("tp_btf/sched_waking")
int BPF_PROG(on_waking, struct task_struct *p)
{
	__u32 tgid = p->tgid, tid = p->pid, cpu;
	struct trace_worker *w;
	struct worker_stats *st;
	struct cycle *c;

	/* Every wakeup on the machine comes here: one load, the cycle of a
	 * traced thread, and for a thread without one its process's place (a
	 * thread asleep since before the attach has returned from no wait
	 * yet). Only the first wakeup of each wait counts: one woken, finding
	 * nothing and sleeping again in the same call is woken for the same
	 * wait. */
	if (!(w = worker_of(tid, tgid)))
		return 0;
	c = &w->c;
	st = &w->s;
	if (c->wake_pending || !waking_in_wait(p, targ_wait_nr))
		return 0;
	c->wake_pending = 1;
	c->wake_ns = bpf_ktime_get_ns();
	cpu = bpf_get_smp_processor_id();
	__sync_fetch_and_add(&st->wakeups, 1);
	if (cpu < TRACE_MAX_CPUS)
		__sync_fetch_and_add(&st->waker_cpu[cpu], 1);
	emit(EV_WAKE, tid, 0, 0);
	return 0;
}

/* Loaded only with --timeline: which CPU a woken worker ran on next, and
 * whom it replaced there. */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u32 tgid = next->tgid, tid = next->pid;
	struct trace_worker *w = worker_find(tid);
	struct accept_event *e;

	if (!w || w->c.tgid != tgid)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return 0;
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = bpf_ktime_get_ns();
	e->kind = EV_SWITCH_IN;
	e->cpu = bpf_get_smp_processor_id();
	e->tid = tid;
	e->tgid = tgid;
	e->prev_pid = prev->pid;
	e->prev_state = prev_state;
	e->preempt = preempt;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), prev->comm);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* A traced process forks (a supervisor respawning a worker): trace the child. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	static const __u8 one = 1;
	__u32 ptgid = parent->tgid, ctgid = child->tgid;

	if (ptgid != ctgid && traced_tgid(ptgid))
		slot_claim(&target_slots, &targets, targ_target_slots, ctgid, 0, &one);
	return 0;
}

/* ---- connections ---- */

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(on_set_state, const struct sock *sk, const int oldstate, const int newstate)
{
	struct conn_seen seen = {};
	__u16 lport;
	__u64 key = (__u64)sk;

	if (newstate != SOCK_TCP_ESTABLISHED || oldstate != SOCK_TCP_SYN_RECV)
		return 0;
	lport = sk->__sk_common.skc_num;
	if (!bpf_map_lookup_elem(&ports, &lport))
		return 0;
	seen.est_ns = bpf_ktime_get_ns();
	seen.est_cpu = bpf_get_smp_processor_id();
	bpf_map_update_elem(&conns, &key, &seen, BPF_ANY);
	if (targ_timeline) {
		struct accept_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (e) {
			__builtin_memset(e, 0, sizeof(*e));
			e->ts_ns = seen.est_ns;
			e->kind = EV_ESTABLISHED;
			e->cpu = seen.est_cpu;
			e->sk = key;
			e->tid = (__u32)bpf_get_current_pid_tgid();
			e->lport = lport;
			e->rport = __builtin_bswap16(sk->__sk_common.skc_dport);
			bpf_get_current_comm(e->comm, sizeof(e->comm));
			bpf_ringbuf_submit(e, 0);
		}
	}
	return 0;
}
