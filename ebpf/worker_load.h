/* worker_load.h: the types ebpf/worker_load.bpf.c (kernel side) and
 * servers/load.c (user side) share: what one worker slot's load is made of,
 * and the tag a connection carries. Fixed-width types only: both compilers
 * must lay them out identically. */
#ifndef ACCEPTLAB_WORKER_LOAD_H
#define ACCEPTLAB_WORKER_LOAD_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Slots in the maps; must equal MAX_SLOTS in servers/server.h (the user
 * side checks at compile time): two per worker index, so a reload's new
 * worker has an entry of its own while the old one still serves. */
#define WORKER_LOAD_MAX_SLOTS 128
/* Worker indexes: index i has slot i and, in process mode, slot i + workers. */
#define WORKER_LOAD_MAX_INDEXES 64
/* Connections tagged at their first read (worker processes): the entries of
 * conn_tags, an array indexed by a hash of the socket's cookie, one
 * claimed per connection of ours as it is established. A connection whose
 * entry another open connection holds keeps its tag in socket storage.
 * Each connection's entry is at a random place, claimed in the softirq that
 * establishes it and read at the worker's first read, often on another
 * CPU: an array far larger than the connections open at once makes that
 * read a cache and TLB miss, where a small one stays cached (as the
 * diagnosis's conn_slots). */
#define WORKER_LOAD_MAX_TAGS 4096

/* SYNs steered to a slot (reuseport-bpf) count until their connection is
 * established, or until they expire: a SYN whose handshake never completes
 * (a flood, a client that gave up, a SYN-ACK answered by RST) leaves no
 * state change behind to uncount it. They are counted in time buckets of
 * 2^SYN_EPOCH_SHIFT ns (134 ms); the load includes the buckets of the last
 * SYN_WINDOW epochs, so a SYN stops counting between 671 and 805 ms after it
 * arrived: well inside the 1 s the design allows, and longer than any
 * handshake that is still going to complete before its SYN-ACK is resent. */
#define SYN_EPOCH_SHIFT 27
#define SYN_BUCKETS 8
#define SYN_WINDOW 6

/* One worker slot's load, in a BPF_F_MMAPABLE array (kernel accounting) or
 * a shared memfd page (user accounting) that every process maps. The load
 * the balancers compare is held + inflight + the SYN window, where inflight
 * is credited - the count in retired (worker_load_inflight below). */
struct load_slot {
	/* Connections the slot's worker holds whose peer has not closed them.
	 * Kernel accounting: raised by the worker as it decides to keep a
	 * connection, before it tags it (undone if the tag finds the
	 * connection gone), or by the kernel for a child of the slot's
	 * listener as it is established; lowered by the kernel the moment a
	 * tagged connection leaves ESTABLISHED (the peer's FIN or RST, or our
	 * own close). User accounting: raised at admission, lowered when the
	 * worker closes the connection. */
	__s64 held;
	/* Hand-offs ever decided for the slot (fdpass: sent to its channel;
	 * handoff: pushed to its queue), less those taken back: raised by the
	 * sender before it sends, lowered if the send fails, or by the kernel
	 * when a sender dies holding a connection it had credited but not sent
	 * (giving below). Never lowered by the receiver: see retired. */
	__s64 credited;
	/* reuseport-bpf: SYNs steered here and not yet established, per epoch
	 * bucket (epoch % SYN_BUCKETS): (epoch << 32) | count. */
	__u64 syn[SYN_BUCKETS];
	/* reuseport-bpf: 1 once the worker's listener is in the sockarray; 0
	 * before, once it stops taking connections, and after it is reaped. */
	__u32 live;
	/* Bumped whenever a new worker takes the slot (and when one is reaped):
	 * a tag of an older generation no longer counts here. */
	__u32 gen;
	/* The pid (tgid) of the worker process that holds the slot, written
	 * when it takes the slot; 0 when none does. */
	__u32 owner;
	/* Kernel accounting: connections of ours that were ESTABLISHED when
	 * the slot's owner died (closed by its exit: the task is the owner and
	 * PF_EXITING; or, a hand-off it had taken, by its sender's close after
	 * the death: exited below), counted here whether the worker had
	 * tagged them yet or not. The supervisor reads it when it reaps the worker: what a killed
	 * worker held open at its death. Restarts with the slot. */
	__u32 died_held;
	/* The hand-offs to the slot that its receiver has retired, as ONE word
	 * so that a kill can never separate its two halves: the count (mod
	 * 2^32) in the high half, the ticket of the last one retired in the
	 * low half. Written only by the slot's current worker (or by the
	 * supervisor once none will run there); it outlives a respawn. */
	__u64 retired;
	/* Kernel accounting: the hand-off the slot's worker has credited and
	 * not yet resolved (sent, or taken back): (target slot + 1) << 48 |
	 * the connection's peer port << 32 | its peer address, both in network
	 * byte order as in struct sock; 0 when none. If the worker dies
	 * closing that connection, the kernel takes the credit back. Cleared
	 * when the slot restarts. */
	__u64 giving;
	/* Kernel accounting, fdpass: 1 from the moment the slot's worker
	 * process begins to exit (sched_process_exit, before its exit closes
	 * its files) until the slot restarts. A hand-off it had taken whose
	 * sender had not yet closed its own copy is closed last by that
	 * sender, after the death: the kernel counts it in died_held too. */
	__u32 exited;
	__u32 unused;
};

/* What a slot has in flight: credited less retired, in 32-bit wrapping
 * arithmetic (the retired count is 32 bits wide). */
#define WORKER_LOAD_INFLIGHT(credited, retired) \
	((__s64)(__s32)((__u32)(credited) - (__u32)((retired) >> 32)))
#define WORKER_LOAD_GIVING_PEER_MASK 0xffffffffffffULL

/* A connection's tag: one 64-bit word, so that each change of it is one
 * compare-and-swap. 0: no tag yet. Else the owner slot + 1 in the low byte
 * (0: none), TAG_COUNTED while it counts in that slot's held, TAG_LEFT once
 * it left ESTABLISHED before anyone owned it (the kernel's marker), and the
 * owner slot's generation when tagged in the high half. */
#define TAG_SLOT_MASK 0xffULL
#define TAG_COUNTED (1ULL << 8)
#define TAG_LEFT (1ULL << 9)
#define TAG_WORD(slot, gen, flags) (((__u64)(gen) << 32) | (flags) | ((__u64)(slot) + 1))
#define TAG_SLOT(word) ((__u32)((word) & TAG_SLOT_MASK) - 1) /* only where the word has one */
#define TAG_GEN(word) ((__u32)((word) >> 32))

/* The tag in the conn_owner socket storage (threads, reuseport-bpf, and the
 * connections of worker processes whose conn_tags entry was taken). */
struct conn_tag {
	__u64 word;
	__u32 listener; /* 1: a per-worker listener's tag, cloned to each child it accepts */
	__u32 spilled;  /* 1: its conn_tags entry was taken (counted in the tags_in_storage map) */
};

/* An entry of conn_tags: the cookie of the socket that holds it (0: free)
 * and its tag word. */
struct conn_entry {
	__u64 cookie;
	__u64 word;
};

/* The 4-tuple of a SYN, to find its steering decision again when its
 * connection is established. Network byte order, as on the wire. */
struct syn_key {
	__u32 local_addr;
	__u32 remote_addr;
	__u16 local_port;
	__u16 remote_port;
	__u32 pad;
};

struct syn_seen {
	__u32 slot;
	__u32 epoch;
};

#endif
