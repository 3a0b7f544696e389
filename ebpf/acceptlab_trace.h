/* acceptlab_trace.h: the types acceptlab_trace.bpf.c (kernel side) and
 * acceptlab_trace.c (the loader, bin/acceptlab-trace) share. */
#ifndef ACCEPTLAB_TRACE_H
#define ACCEPTLAB_TRACE_H

#define TRACE_MAX_CPUS 64     /* per-CPU counters kept for CPUs 0..63 */
#define TRACE_HIST_SLOTS 32   /* log2 buckets of microseconds: slot k holds [2^k, 2^(k+1)) us, slot 0 [0, 2) */
#define TRACE_MAX_TARGETS 1024
#define TRACE_MAX_PORTS 16
#define TRACE_MAX_WORKERS 4096 /* threads of the traced processes followed, beyond the array's */
#define TRACE_TARGET_SLOTS 1024 /* the traced processes' array (slots.bpf.h) */
#define TRACE_WORKER_SLOTS 1024 /* the traced threads' array */

/* Per worker (keyed by tid): what happened to it while traced. */
struct worker_stats {
	__u32 tgid;
	__u32 pad;
	__u64 wakeups;      /* sched_waking of this thread asleep in epoll_wait or accept: the first in each call */
	__u64 won;          /* accept/accept4 returned a connection */
	__u64 lost;         /* accept/accept4 returned EAGAIN */
	__u64 wasted;       /* wakeups after which it lost an accept and won none before its next wait returned */
	__u64 wait_returns; /* epoll_wait/epoll_pwait/epoll_pwait2 returned */
	__u64 empty_returns; /* of those, returns followed by no accept won before the next wait returned */
	__u64 established;  /* connections it won whose ESTABLISHED the tracer saw */
	__u64 accept_cpu[TRACE_MAX_CPUS];   /* CPU each won accept ran on */
	__u64 waker_cpu[TRACE_MAX_CPUS];    /* CPU the waker ran on, per wakeup */
	__u64 est_cpu[TRACE_MAX_CPUS];      /* CPU each won connection became ESTABLISHED on */
	__u64 wake_to_accept[TRACE_HIST_SLOTS]; /* wakeup -> the first accept() to return after it, log2 us */
};

/* Per tid: the cycle it is in, from its last wait's return (epoll_wait,
 * epoll_pwait, epoll_pwait2) to the next's; a blocking accept's wakeup is
 * its own accept's. */
struct cycle {
	__u64 wake_ns;    /* its last wakeup counted */
	__u32 tgid;       /* its process: a tid reused by another process is not taken for it */
	__u8 wake_pending; /* woken in the wait (or accept) it is in, which has not returned yet */
	__u8 woken;       /* the wait that began this cycle woke it (or, blocked in accept, the accept) */
	__u8 accept_seen; /* an accept() returned since that wakeup */
	__u8 returned;    /* the cycle began with a wait's return */
	__u8 won;         /* won an accept in this cycle */
	__u8 lost;        /* got EAGAIN in this cycle */
	__u8 pad[2];
};

/* Per tid, one map value: its cycle and its stats, found by one lookup
 * (every traced event needs both). */
struct trace_worker {
	struct cycle c;
	struct worker_stats s;
};

/* An entry of worker_slots: the thread holding it (0 free; never freed
 * once claimed) and its record. */
struct trace_worker_slot {
	__u64 tid;
	struct trace_worker w;
};

/* A cycle's end, into its thread's stats: a return followed by no accept
 * won (empty_returns) and a wakeup followed by EAGAIN and no accept won
 * (wasted). The kernel side ends a cycle at the next wait's return, the
 * loader the ones still open when the trace ends. */
#define trace_cycle_empty(c) ((c)->returned && !(c)->won)
#define trace_cycle_wasted(c) ((c)->woken && (c)->lost && !(c)->won)

/* --timeline: one event per thing that happened, in a ring buffer. */
enum trace_event_kind {
	EV_ESTABLISHED = 1, /* a connection to a traced port became ESTABLISHED (softirq: cpu is where) */
	EV_WAKE = 2,        /* a traced thread blocked in wait/accept was woken (cpu: the waker's) */
	EV_SWITCH_IN = 3,   /* a traced thread got a CPU (cpu: which); prev_* is who it replaced */
	EV_ACCEPT = 4,      /* a traced thread's accept returned (ret: fd or -errno) */
};

struct accept_event {
	__u64 ts_ns;
	__u64 sk;        /* EV_ESTABLISHED, EV_ACCEPT (won): the socket, to pair them */
	__s64 ret;       /* EV_ACCEPT */
	__u32 kind;
	__u32 cpu;
	__u32 tid;       /* the traced thread (EV_ESTABLISHED: the task running then, often none of ours) */
	__u32 tgid;
	__u32 prev_pid;  /* EV_SWITCH_IN */
	__u32 prev_state; /* EV_SWITCH_IN: 0 means the previous task was still runnable */
	__u32 preempt;   /* EV_SWITCH_IN: the switch was a preemption */
	__u16 lport, rport; /* EV_ESTABLISHED: local and remote port */
	char comm[16];   /* EV_SWITCH_IN: the previous task's name; EV_ESTABLISHED: current's */
};

#endif
