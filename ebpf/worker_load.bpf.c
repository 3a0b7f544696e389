// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* worker_load.bpf.c: the kernel side of the balancing variants' load
 * accounting (servers/load.c), and reuseport-bpf's steering by it.
 *
 * A worker's load is the connections it holds whose peer has not closed
 * them, plus those in flight to it. User space cannot see a peer's FIN or
 * RST until the worker reads it, so the kernel counts:
 *
 *  - count_state (tp_btf/inet_sock_set_state) runs in softirq at every TCP
 *    state change. A connection tagged with an owner slot stops counting
 *    in that slot's `held` the moment it leaves ESTABLISHED: the peer's
 *    FIN (-> CLOSE_WAIT), its RST (-> CLOSE), or our own close
 *    (-> FIN_WAIT1). A tag is one word, changed only by compare-and-swap,
 *    and lives in one place for the connection's whole life: in worker
 *    processes (targ_tag_on_read), the conn_tags entry the connection
 *    claims as it is established, freed by count_destroy; else, and where
 *    that entry was another open connection's, the conn_owner socket
 *    storage. Tags come from two places:
 *      - the worker that admits a connection owns it. In a worker process
 *        (targ_tag_on_read: fdpass's processes) tag_on_read
 *        (tp_btf/sock_recv_length) writes the tag at the worker's first
 *        read of it, which the harness makes at once after the accept
 *        phase: the tag costs the worker no syscall of its own. Threads
 *        share one process, which does not say whose read it is: there
 *        the worker creates it (servers/load.c, a map update by fd with
 *        BPF_NOEXIST). A connection of ours (local port targ_port in netns
 *        targ_netns) that leaves ESTABLISHED before it has a tag gets a
 *        marker (TAG_LEFT, no slot) here instead. Whichever write comes
 *        first wins (a compare-and-swap of the word; the storage's lock
 *        for a create by fd). A worker's create by fd then fails, and it
 *        does not count a connection that has already gone; a first read
 *        that finds the marker takes it over and uncounts the reader's
 *        hold, once. So a connection counts exactly while the kernel will
 *        still see it leave.
 *      - a per-worker listener's tag (reuseport-bpf) is cloned to every
 *        child it accepts (BPF_F_CLONE); the child starts counting for the
 *        listener's slot the moment it is established, before any worker
 *        has accepted it.
 *    A tag carries its slot's generation: one the slot has moved past (its
 *    worker was replaced) no longer counts.
 *  - count_state and count_destroy (tp_btf/tcp_destroy_sock, for a
 *    connection already reset, whose close changes no state) also see a
 *    dying worker's own closes: if it is the connection the worker was
 *    handing off (its slot's giving record), credited to a target and not
 *    sent, the target's credit is taken back here (dying_giver), so a
 *    sender killed anywhere between its credit and its successful send
 *    leaves no hand-off counted that will never arrive. A receiver killed
 *    holding a hand-off whose sender had not yet closed its own copy dies
 *    without its exit's close being the last: mark_exited
 *    (tp_btf/sched_process_exit) marks its slot exited first, and the
 *    sender's close counts the connection in the slot's died_held
 *    (given_to_dead).
 *  - select_least_loaded (sk_reuseport, reuseport-bpf only) picks the live
 *    slot with the least load for each SYN and counts the SYN in that
 *    slot's current time bucket; the SYN stops counting when its connection
 *    is established (count_state finds it again by its 4-tuple) or when its
 *    bucket leaves the window (under 1 s: request sockets that die, from a
 *    flood or a client that gave up, pass no state change to uncount them).
 *    A pure ACK that reaches the listener lookup (a syncookie's) goes to the
 *    slot its SYN was steered to.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "worker_load.h"
#include "sock.bpf.h"

#define TCP_ESTABLISHED 1
#define TCP_SYN_RECV 3
#define TCP_CLOSE_WAIT 8
#define PROTO_TCP 6
#define ETH_P_IPV4 0x0800
#define TCP_FLAGS_OFFSET 13
#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_RST 0x04
#define TCP_FLAG_ACK 0x10
#define CAS_TRIES 8
#define PF_EXITING 0x00000004 /* include/linux/sched.h */
#define SHUTDOWN_MASK 3       /* include/net/sock.h: RCV_SHUTDOWN | SEND_SHUTDOWN */
#define EEXIST 17             /* include/uapi/asm-generic/errno-base.h */

#define MAX_SLOTS WORKER_LOAD_MAX_SLOTS
#define MAX_INDEXES WORKER_LOAD_MAX_INDEXES

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by user space before load. */
const volatile __u32 targ_workers = 1;          /* worker indexes */
const volatile __u32 targ_slots_per_worker = 1; /* 2 in process mode, 1 in threads mode */
const volatile __u32 targ_port = 0;             /* our port, host order */
const volatile __u32 targ_netns = 0;            /* our network namespace's inode */
const volatile bool targ_steer = false;         /* reuseport-bpf: SYNs are steered and counted */
const volatile bool targ_tag_on_read = false;   /* worker processes: a connection's first read tags it */
const volatile bool targ_giving = false;        /* fdpass: senders keep giving records */
const volatile __u32 targ_tags = WORKER_LOAD_MAX_TAGS; /* conn_tags' entries */

/* slot -> its load; mmapped by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct load_slot);
} slots SEC(".maps");

/* socket -> its tag (struct conn_tag), where tags are made by fd
 * (threads), cloned from a listener (reuseport-bpf), or have no conn_tags
 * entry. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_CLONE);
	__type(key, int);
	__type(value, struct conn_tag);
} conn_owner SEC(".maps");

/* The tags of worker processes' connections (targ_tag_on_read): an array
 * indexed by a hash of the socket's cookie. A connection of ours claims
 * its entry as it is established, before any worker can accept it, so
 * every later event finds its tag in one place: the entry if it holds the
 * socket's cookie, else the socket storage (the entry was another open
 * connection's). An entry costs a connection a few atomic operations and
 * no lock, where a hash insert and delete each took a bucket's lock, and
 * socket storage allocates and frees. count_destroy frees the entry. A
 * cookie is never reused, so no later socket can take a stale entry for
 * its own. User space sizes it (targ_tags; 1 entry where socket storage
 * is used). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WORKER_LOAD_MAX_TAGS);
	__type(key, __u32);
	__type(value, struct conn_entry);
} conn_tags SEC(".maps");

/* Entry 0: the connections of ours that keep their tag in socket storage
 * because their conn_tags entry was another open connection's, while they
 * last (the tests read it). A map, not a global, so that a server without
 * conn_tags creates neither (each is a descriptor its workers hold). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} tags_in_storage SEC(".maps");

/* reuseport-bpf: a SYN's 4-tuple -> the slot and epoch it was counted in.
 * LRU: entries of handshakes that never completed are simply evicted (their
 * counts expire with their bucket). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct syn_key);
	__type(value, struct syn_seen);
} syn_owner SEC(".maps");

/* reuseport-bpf: slot -> that worker's listening socket. */
struct {
	__uint(type, BPF_MAP_TYPE_REUSEPORT_SOCKARRAY);
	__uint(max_entries, MAX_SLOTS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} worker_listeners SEC(".maps");

/* reuseport-bpf: where the next scan starts, so equal loads take turns. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tie_rotation SEC(".maps");

static __always_inline __u32 epoch_now(void)
{
	return (__u32)(bpf_ktime_get_ns() >> SYN_EPOCH_SHIFT);
}

/* Counts one SYN in s's bucket for epoch, restarting the bucket if it
 * still holds an older epoch's count. */
static __always_inline void syn_add(struct load_slot *s, __u32 epoch)
{
	__u64 *b = &s->syn[epoch % SYN_BUCKETS];

	for (int i = 0; i < CAS_TRIES; i++) {
		__u64 old = *(volatile __u64 *)b;
		__u64 new = (__u32)(old >> 32) == epoch ? old + 1 : ((__u64)epoch << 32) | 1;

		if (__sync_val_compare_and_swap(b, old, new) == old)
			return;
	}
}

/* Uncounts a SYN counted at epoch, unless its bucket has moved on. */
static __always_inline void syn_sub(struct load_slot *s, __u32 epoch)
{
	__u64 *b = &s->syn[epoch % SYN_BUCKETS];

	for (int i = 0; i < CAS_TRIES; i++) {
		__u64 old = *(volatile __u64 *)b;

		if ((__u32)(old >> 32) != epoch || (__u32)old == 0)
			return;
		if (__sync_val_compare_and_swap(b, old, old - 1) == old)
			return;
	}
}

/* SYNs counted in the window that ends at epoch now. */
static __always_inline __s64 syn_window(const struct load_slot *s, __u32 now)
{
	__s64 sum = 0;

#pragma unroll
	for (int i = 0; i < SYN_BUCKETS; i++) {
		__u64 v = *(volatile const __u64 *)&s->syn[i];

		if (now - (__u32)(v >> 32) < SYN_WINDOW)
			sum += (__u32)v;
	}
	return sum;
}

/* ---- steering (reuseport-bpf) ---------------------------------------- */

enum segment { SEG_OTHER, SEG_NEW, SEG_ACK };

static __always_inline enum segment segment_kind(struct sk_reuseport_md *md)
{
	__u8 *data = md->data, *data_end = md->data_end, flags;

	if (md->migrating_sk)
		return SEG_NEW;
	if (md->ip_protocol != PROTO_TCP || data + TCP_FLAGS_OFFSET + 1 > data_end)
		return SEG_OTHER;
	flags = data[TCP_FLAGS_OFFSET] & (TCP_FLAG_SYN | TCP_FLAG_ACK | TCP_FLAG_RST);
	if (flags == TCP_FLAG_SYN)
		return SEG_NEW;
	if (flags == TCP_FLAG_ACK)
		return SEG_ACK;
	return SEG_OTHER;
}

/* The segment's 4-tuple (IPv4 only); 1, or 0 if it cannot be read. */
static __always_inline int segment_tuple(struct sk_reuseport_md *md, struct syn_key *k)
{
	__u8 *data = md->data, *data_end = md->data_end;
	__u32 addrs[2];

	if (md->eth_protocol != bpf_htons(ETH_P_IPV4) || data + 4 > data_end)
		return 0;
	/* saddr, daddr: bytes 12..19 of the IPv4 header */
	if (bpf_skb_load_bytes_relative(md, 12, addrs, sizeof(addrs), BPF_HDR_START_NET))
		return 0;
	k->remote_addr = addrs[0];
	k->local_addr = addrs[1];
	k->remote_port = *(__u16 *)data;
	k->local_port = *(__u16 *)(data + 2);
	k->pad = 0;
	return 1;
}

/* Finds the live slot with the least load, scanning the indexes from start
 * (each index's slots in turn), leaving out slot skip (MAX_SLOTS: none).
 * Rotating over indexes, not slots, keeps the turns even when half the
 * slots are unused. Returns 1 and sets *best, or 0. */
static __always_inline int pick_least_loaded(__u32 n, __u32 start, __u32 skip, __u32 now, __u32 *best)
{
	__s64 best_load = 0;
	int found = 0;

	for (__u32 k = 0; k < MAX_INDEXES; k++) {
		__u32 i;

		if (k >= n)
			break;
		i = start + k;
		if (i >= n)
			i -= n;
		for (__u32 g = 0; g < 2; g++) {
			__u32 sl = i + g * n;
			struct load_slot *s;
			__s64 load;

			if (g >= targ_slots_per_worker)
				break;
			if (sl == skip)
				continue;
			s = bpf_map_lookup_elem(&slots, &sl);
			if (!s || !*(volatile __u32 *)&s->live)
				continue;
			load = *(volatile __s64 *)&s->held + syn_window(s, now) +
			       WORKER_LOAD_INFLIGHT(*(volatile __s64 *)&s->credited, *(volatile __u64 *)&s->retired);
			if (!found || load < best_load) {
				found = 1;
				*best = sl;
				best_load = load;
			}
		}
	}
	return found;
}

SEC("sk_reuseport")
int select_least_loaded(struct sk_reuseport_md *md)
{
	__u32 zero = 0, n = targ_workers, start, best = 0, now, *rotation;
	enum segment kind = segment_kind(md);
	struct syn_seen *seen, record;
	struct load_slot *s;
	struct syn_key key;
	int have_key;

	if (kind == SEG_OTHER || n == 0)
		return SK_PASS;
	have_key = !md->migrating_sk && segment_tuple(md, &key);
	if (kind == SEG_ACK) {
		/* No request socket (syncookies): the connection is made now, at
		 * the listener its SYN was steered to. */
		if (have_key && (seen = bpf_map_lookup_elem(&syn_owner, &key)))
			bpf_sk_select_reuseport(md, &worker_listeners, &seen->slot, 0);
		return SK_PASS;
	}
	if (n > MAX_INDEXES)
		n = MAX_INDEXES;
	rotation = bpf_map_lookup_elem(&tie_rotation, &zero);
	if (!rotation)
		return SK_PASS;
	start = __sync_fetch_and_add(rotation, 1) % n;
	now = epoch_now();

	if (!pick_least_loaded(n, start, MAX_SLOTS, now, &best))
		return SK_PASS; /* no live worker: the kernel's hash decides */
	if (bpf_sk_select_reuseport(md, &worker_listeners, &best, 0) != 0) {
		/* The chosen listener has left the sockarray: its worker is dying
		 * and not yet reaped. Try the next best once; if that fails too,
		 * SK_PASS lets the hash pick, uncounted until established. */
		__u32 dying = best;

		if (!pick_least_loaded(n, start, dying, now, &best) ||
		    bpf_sk_select_reuseport(md, &worker_listeners, &best, 0) != 0)
			return SK_PASS;
	}
	s = bpf_map_lookup_elem(&slots, &best);
	if (!s)
		return SK_PASS;
	syn_add(s, now);
	if (have_key) {
		record.slot = best;
		record.epoch = now;
		bpf_map_update_elem(&syn_owner, &key, &record, BPF_ANY);
	}
	return SK_PASS;
}

/* ---- counting (every balancing variant) ------------------------------- */

/* The conn_tags entry for the socket whose cookie is id (whichever socket
 * holds it), or NULL. A socket's cookie is made at the first ask, and no
 * other socket ever has it. */
static __always_inline struct conn_entry *entry_of(__u64 id)
{
	__u32 i = (__u32)((id * 0x9E3779B97F4A7C15ULL) >> 32) % targ_tags;

	return bpf_map_lookup_elem(&conn_tags, &i);
}

/* sk's cookie, read, not made (0 if no one asked for it yet): every socket
 * that claimed an entry has one. */
static __always_inline __u64 cookie_of(const struct sock *sk)
{
	return (__u64)sk->__sk_common.skc_cookie.counter;
}

/* sk's conn_tags entry if it holds sk's cookie, else NULL. */
static __always_inline struct conn_entry *held_entry(const struct sock *sk)
{
	__u64 id = cookie_of(sk);
	struct conn_entry *e = id ? entry_of(id) : NULL;

	return e && *(volatile __u64 *)&e->cookie == id ? e : NULL;
}

/* sk's tag word in its socket storage, made empty if create and missing;
 * or NULL. */
static __always_inline __u64 *stored_tag(struct sock *sk, int create)
{
	struct conn_tag *t, empty = {};

	if (create)
		t = bpf_sk_storage_get(&conn_owner, sk, &empty, BPF_SK_STORAGE_GET_F_CREATE);
	else
		t = bpf_sk_storage_get(&conn_owner, sk, 0, 0);
	return t ? &t->word : NULL;
}

/* Where sk's tag word is: its conn_tags entry if that holds sk's cookie,
 * else its socket storage (stored_tag); or NULL. A word of 0 is no tag. */
static __always_inline __u64 *tag_place(struct sock *sk, int create)
{
	struct conn_entry *e = targ_tag_on_read ? held_entry(sk) : NULL;

	return e ? &e->word : stored_tag(sk, create);
}

/* tags_in_storage's count, or NULL. */
static __always_inline __s64 *storage_count(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&tags_in_storage, &zero);
}

/* A connection of ours in a worker process is established: it claims its
 * conn_tags entry. Its socket lock is held, and no worker can read it
 * before the lock is released, so the claim comes before any other event
 * that looks for its tag. An entry another open connection holds leaves
 * the tag to the socket storage, made now and counted in tags_in_storage
 * until the socket is destroyed. */
static __always_inline void claim_entry(struct sock *sk)
{
	__u64 id = bpf_get_socket_cookie(sk);
	struct conn_entry *e = entry_of(id);
	struct conn_tag *t, empty = {};
	__s64 *spilled;

	if (e && __sync_val_compare_and_swap(&e->cookie, 0, id) == 0)
		return;
	t = bpf_sk_storage_get(&conn_owner, sk, &empty, BPF_SK_STORAGE_GET_F_CREATE);
	if (t && (spilled = storage_count())) {
		t->spilled = 1;
		__sync_fetch_and_add(spilled, 1);
	}
}

/* sk is destroyed: its conn_tags entry is free again (its word first, so
 * the next socket to claim it finds no tag), or it leaves tags_in_storage. */
static __always_inline void release_entry(struct sock *sk)
{
	struct conn_entry *e = held_entry(sk);
	struct conn_tag *t;
	__s64 *spilled;

	if (e) {
		__sync_lock_test_and_set(&e->word, 0);
		__sync_lock_test_and_set(&e->cookie, 0);
		return;
	}
	t = bpf_sk_storage_get(&conn_owner, sk, 0, 0);
	if (t && t->spilled && (spilled = storage_count()))
		__sync_fetch_and_add(spilled, -1);
}

static __always_inline struct load_slot *slot_of(__u64 word)
{
	__u32 sl = TAG_SLOT(word);
	struct load_slot *s = bpf_map_lookup_elem(&slots, &sl);

	return s && s->gen == TAG_GEN(word) ? s : NULL;
}

/* A connection of ours: our port in our network namespace (the port read
 * as sk_local_port reads it: still there when the move to CLOSE has
 * released the bound port). */
static __always_inline int ours(const struct sock *sk)
{
	__u16 num = sk->__sk_common.skc_num;

	/* At a glance first: a bound port (a direct read) that is not ours.
	 * Only a released one (0) needs inet_sport's slower read. */
	if (!targ_port || (num && num != targ_port) || (!num && sk_local_port(sk) != targ_port))
		return 0;
	return sk->__sk_common.skc_net.net->ns.inum == targ_netns;
}

/* reuseport-bpf: the SYN of this new connection no longer counts. */
static __always_inline void retire_syn(const struct sock *sk)
{
	struct syn_seen *seen;
	struct load_slot *s;
	struct syn_key key = {
		.local_addr = sk->__sk_common.skc_rcv_saddr,
		.remote_addr = sk->__sk_common.skc_daddr,
		.local_port = bpf_htons(sk->__sk_common.skc_num),
		.remote_port = sk->__sk_common.skc_dport,
	};

	seen = bpf_map_lookup_elem(&syn_owner, &key);
	if (!seen)
		return;
	s = bpf_map_lookup_elem(&slots, &seen->slot);
	if (s)
		syn_sub(s, seen->epoch);
	bpf_map_delete_elem(&syn_owner, &key);
}

static __always_inline int established(struct sock *sk)
{
	struct conn_tag *tag;
	struct load_slot *s;

	if (targ_tag_on_read && ours(sk))
		claim_entry(sk);
	if (!targ_steer)
		return 0; /* no steering, no listener tags: nothing more to do */
	retire_syn(sk);
	tag = bpf_sk_storage_get(&conn_owner, sk, 0, 0);
	if (!tag || !tag->listener)
		return 0;
	/* A child of a per-worker listener, its tag cloned from the
	 * listener's: it counts for that slot from now. No one else has the
	 * connection yet: plain stores. */
	tag->listener = 0;
	s = slot_of(tag->word);
	if (!s)
		return 0;
	tag->word |= TAG_COUNTED;
	__sync_fetch_and_add(&s->held, 1);
	return 0;
}
/* The slot whose worker process is tgid (its index in *slot), or NULL. */
static __always_inline struct load_slot *slot_index_of_task(__u32 tgid, __u32 *slot)
{
	__u32 n = targ_workers * targ_slots_per_worker;

	for (__u32 i = 0; i < MAX_SLOTS && i < n; i++) {
		__u32 key = i; /* the counter stays in a register the verifier bounds */
		struct load_slot *c = bpf_map_lookup_elem(&slots, &key);

		if (c && c->owner == tgid) {
			*slot = i;
			return c;
		}
	}
	return NULL;
}

static __always_inline struct load_slot *slot_of_task(__u32 tgid)
{
	__u32 slot;

	return slot_index_of_task(tgid, &slot);
}

/* The giving record of current's worker process if it names sk's peer (the
 * connection it is handing off), its slot in *from; else 0. */
static __always_inline __u64 giving_of(const struct sock *sk, struct load_slot **from)
{
	struct load_slot *s = slot_of_task(bpf_get_current_pid_tgid() >> 32);
	__u64 g, peer;

	if (!s)
		return 0;
	g = *(volatile __u64 *)&s->giving;
	peer = ((__u64)sk->__sk_common.skc_dport << 32) | sk->__sk_common.skc_daddr;
	if (!g || (g & WORKER_LOAD_GIVING_PEER_MASK) != peer)
		return 0;
	*from = s;
	return g;
}

/* The slot a giving record hands its connection to. */
static __always_inline struct load_slot *giving_target(__u64 g)
{
	__u32 target = (__u32)(g >> 48) - 1;

	return bpf_map_lookup_elem(&slots, &target);
}

/* Our own close of sk, in a worker process that is dying: if sk is the
 * connection it was handing off (its slot's giving record names sk's peer),
 * it credited the target and never sent it (a sent one is still held by its
 * message, so its last close is not this one): take the credit back.
 * sk_shutdown reads SHUTDOWN_MASK only once __tcp_close has begun (a peer's
 * FIN sets RCV_SHUTDOWN alone, and a reset sets it after this tracepoint),
 * so a segment processed in softirq while the dying task happens to be
 * current is never taken for its close. The record is cleared by a
 * compare-and-swap, so a second event for the same close does nothing. */
static __always_inline void dying_giver(const struct sock *sk)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct load_slot *s = NULL, *t;
	__u64 g;

	if (!(task->flags & PF_EXITING) || sk->sk_shutdown != SHUTDOWN_MASK || !ours(sk))
		return;
	g = giving_of(sk, &s);
	if (!g || !s || __sync_val_compare_and_swap(&s->giving, g, 0) != g)
		return;
	t = giving_target(g);
	if (t)
		__sync_fetch_and_add(&t->credited, -1);
}

/* fdpass: our close of sk, by a live task, after the worker it was handed
 * to began to exit. The receiver had taken it, so its exit's close was not
 * the last: the sender still held its own copy, between its send and its
 * close. The connection was open at the receiver's death: count it in that
 * slot's died_held. s is the slot sk's tag names (a tag of its generation);
 * NULL if no one tagged it, the receiver dying before its first read: then
 * the sender's giving record, still set until after its close, names the
 * slot. A live receiver holds its copy, so a sender's close is the last
 * one only once the receiver has closed it, or died. A receiver that
 * answered and closed it, then exited, all inside that window, is counted
 * too: an over-count, never a loss left uncounted. */
static __always_inline void given_to_dead(struct load_slot *s, const struct sock *sk)
{
	struct load_slot *from;
	__u64 g;

	if (!s && (g = giving_of(sk, &from)))
		s = giving_target(g);
	if (s && *(volatile __u32 *)&s->exited)
		__sync_fetch_and_add(&s->died_held, 1);
}

/* A connection of ours leaves ESTABLISHED in the context of current: if
 * current is a worker process dying (PF_EXITING) and s (or, for a connection
 * it had not tagged yet, s NULL) is its slot, the connection was open at its
 * death: count it in the slot's died_held. A close by the dying worker's
 * exit runs in its own context (its files are put in do_exit), so this
 * tells a killed worker's connections from any other close; fdpass's
 * senders close the hand-offs a dead receiver had taken (given_to_dead). */
static __always_inline void count_death(struct load_slot *s, const struct sock *sk)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (!(task->flags & PF_EXITING)) {
		if (targ_giving && sk->sk_shutdown == SHUTDOWN_MASK)
			given_to_dead(s, sk);
		return;
	}
	if (!s)
		s = slot_of_task(tgid);
	if (s && s->owner && s->owner == tgid)
		__sync_fetch_and_add(&s->died_held, 1);
}

static __always_inline int left_established(struct sock *sk)
{
	struct load_slot *s;
	__u64 *w;

	/* Every connection on the machine passes here; only ours can have a
	 * tag, so the others leave before any lookup. */
	if (!ours(sk))
		return 0;
	w = tag_place(sk, 1);
	if (!w)
		return 0;
	for (int i = 0; i < CAS_TRIES; i++) {
		__u64 old = *(volatile __u64 *)w;

		if (!old) {
			/* Gone before any worker tagged it: the marker, which the
			 * worker's first read takes over (or its create by fd
			 * finds). */
			if (__sync_val_compare_and_swap(w, 0, TAG_LEFT) != 0)
				continue; /* the worker's tag came first */
			count_death(NULL, sk); /* accepted, not yet admitted, when its worker died */
			return 0;
		}
		if (!(old & TAG_COUNTED))
			return 0;
		if (__sync_val_compare_and_swap(w, old, old & ~TAG_COUNTED) != old)
			continue;
		s = slot_of(old);
		if (s) {
			__sync_fetch_and_add(&s->held, -1);
			count_death(s, sk);
		}
		return 0;
	}
	return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(count_state, struct sock *sk, int oldstate, int newstate)
{
	if (sk->sk_protocol != PROTO_TCP)
		return 0;
	if (oldstate == TCP_SYN_RECV && newstate == TCP_ESTABLISHED)
		return established(sk);
	/* Our close of a connection the peer has not closed, or has (FIN). */
	if (oldstate == TCP_ESTABLISHED || oldstate == TCP_CLOSE_WAIT)
		dying_giver(sk);
	if (oldstate == TCP_ESTABLISHED)
		return left_established(sk);
	return 0;
}

/* A worker process reads a connection of ours (targ_tag_on_read): its first
 * read tags it for the reader's slot, counted. The harness reads every
 * connection it admits at once, after its accept phase, and only the
 * worker that holds a connection reads it (an acceptor that hands one off
 * never does), so the first reader is the owner, and it raised its held
 * before. A marker found instead (the connection left ESTABLISHED before
 * this read) is taken over, and that hold uncounted, once: whichever
 * compare-and-swap of the word comes first wins. Every later read returns
 * after one lookup. */
SEC("tp_btf/sock_recv_length")
int BPF_PROG(tag_on_read, struct sock *sk, int ret, int flags)
{
	struct task_struct *task;
	struct load_slot *s;
	__u64 *w, owned;
	__u32 slot;

	if (!sk || !ours(sk))
		return 0;
	w = tag_place(sk, 0);
	if (w && (*(volatile __u64 *)w & TAG_SLOT_MASK))
		return 0;
	if (sk->sk_protocol != PROTO_TCP)
		return 0;
	task = bpf_get_current_task_btf();
	if (task->flags & PF_EXITING)
		return 0;
	s = slot_index_of_task(bpf_get_current_pid_tgid() >> 32, &slot);
	if (!s)
		return 0; /* not a worker's read */
	if (!w && !(w = stored_tag(sk, 1))) /* no entry holds it: tag_place looked */
		return 0;
	owned = TAG_WORD(slot, s->gen, 0);
	for (int i = 0; i < CAS_TRIES; i++) {
		__u64 old = *(volatile __u64 *)w;

		if (old & TAG_SLOT_MASK)
			return 0;
		if (!old) {
			if (__sync_val_compare_and_swap(w, 0, owned | TAG_COUNTED) == 0)
				return 0;
			continue; /* the kernel's marker came first */
		}
		if (__sync_val_compare_and_swap(w, old, owned | TAG_LEFT) == old) {
			__sync_fetch_and_add(&s->held, -1);
			return 0;
		}
	}
	return 0;
}

/* fdpass (targ_giving): a worker process's last thread begins to exit,
 * before its exit closes its files: its slot is marked exited until the
 * slot restarts (given_to_dead). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(mark_exited, struct task_struct *p)
{
	struct load_slot *s;

	if (p->signal->live.counter)
		return 0; /* another thread of the process runs on */
	s = slot_of_task(p->tgid);
	if (s)
		*(volatile __u32 *)&s->exited = 1;
	return 0;
}

/* Our close of a connection the peer had already reset changes no state:
 * __tcp_close destroys it at once, in the closing task. Every connection
 * ends here, so its conn_tags entry is freed too. */
SEC("tp_btf/tcp_destroy_sock")
int BPF_PROG(count_destroy, struct sock *sk)
{
	if (sk->sk_protocol != PROTO_TCP)
		return 0;
	dying_giver(sk);
	if (targ_tag_on_read && ours(sk))
		release_entry(sk);
	return 0;
}
