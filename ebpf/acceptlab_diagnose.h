/* acceptlab_diagnose.h: the types acceptlab_diagnose.bpf.c (kernel side)
 * and bin/acceptlab-diagnose (the loader, acceptlab_diagnose.c) share. */
#ifndef ACCEPTLAB_DIAGNOSE_H
#define ACCEPTLAB_DIAGNOSE_H

#define DIAG_MAX_THREADS 8192  /* threads the per-thread map holds */
/* Entries of the followed connections' array (conn_slots). Each
 * connection's entry is at a random place (its socket's hash), so an array
 * far larger than the connections open at once is a cache and TLB miss at
 * every event that looks one up; a small one stays cached, and the few
 * connections whose entry another holds go to the hash beside it. */
#define DIAG_CONN_SLOTS 4096
#define DIAG_MAX_CONNS 262144  /* connections followed at once in the hash beside it (LRU beyond) */
#define DIAG_MAX_TARGETS 1024  /* processes traced (the holders and their forks) */
/* Entries of the traced threads' array (thread_slots) and the traced
 * processes' (target_slots). A record sits at its id's place (id % N);
 * the ones whose place another holds go to the hash beside it (threads,
 * targets). Every program looks up a thread or a process at each event,
 * and a hash lookup cost a program as much as the rest of its body; an
 * array's place is one load. */
#define DIAG_THREAD_SLOTS 1024
#define DIAG_TARGET_SLOTS 1024

/* Per thread (keyed by tid): what it did with the port's connections. */
struct diag_thread {
	__u32 tgid;
	__u32 pad0;
	__u64 accepted;      /* accept/accept4 returned a connection to the port */
	__u64 served;        /* connections whose bytes it read first */
	__s64 held;          /* connections it owns (its served, else its accepted) not yet destroyed */
	__s64 held_peak;     /* the most it has held at once */
	__u64 handed_off;    /* connections it accepted that another thread read first */
	__u64 received;      /* connections it read first that another thread accepted */
	__u64 received_cross; /* of those, accepted in another process */
	__u64 wakeups;       /* woken while asleep in a wait: epoll_wait/epoll_pwait(2), poll/ppoll, select/pselect6, accept/accept4 */
	__u64 wasted;        /* wakeups after which it got EAGAIN from accept and won none before its next wakeup
			      * (a cycle still open when the trace ends is the loader's to close: cycle_wasted) */
	__u8 woken;          /* the cycle from its last wakeup: it was woken, */
	__u8 won;            /* an accept returned a connection since, */
	__u8 lost;           /* an accept returned EAGAIN since */
	__u8 pad[5];
};

/* An entry of thread_slots: the thread it holds (0 free; never freed once
 * claimed) and its record. */
struct diag_thread_slot {
	__u64 tid;
	struct diag_thread t;
};

/* Whether the cycle a thread's record leaves open (its last wakeup, to the
 * trace's end) was a wasted wakeup. */
#define cycle_wasted(t) ((t)->woken && (t)->lost && !(t)->won)

/* Per connection, from its accept to its destruction. */
struct diag_conn {
	__u32 acceptor;      /* tid whose accept returned it */
	__u32 acceptor_tgid; /* its process */
	__u32 server;        /* tid that read its bytes first, 0 not yet */
	__u32 owner;         /* tid whose `held` counts it, 0 none */
};

/* An entry of conn_slots: the connection it follows (its struct sock *,
 * 0 free) and its record. */
struct diag_conn_slot {
	__u64 sk;
	struct diag_conn c;
};

/* Totals over the whole trace (the kernel side keeps one copy per CPU,
 * which the loader sums). */
struct diag_totals {
	__u64 established;   /* the loader's: accepted, plus what the listeners' queues gained */
	__u64 accepted;      /* accepts of the port's connections by the traced processes */
	__u64 served;        /* first reads of them seen */
	__u64 handoffs;      /* first reads by a thread other than the acceptor */
	__u64 closed;        /* of them, destroyed (both ends closed, or a reset) */
	__u64 unaccepted_reads; /* first reads, by a process not traced, of connections no traced accept returned */
	__u64 spilled;       /* accepted connections followed in the hash: another open one held their entry */
};

#endif
