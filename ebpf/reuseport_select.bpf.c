// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* reuseport_select.bpf.c: the reuseport-bpf variant's kernel side. An
 * sk_reuseport program attached to the workers' SO_REUSEPORT group that
 * steers each new connection to the live worker with the fewest open
 * connections.
 *
 * It runs when a SYN looks up the listening group, before any worker has
 * accepted anything, so it counts its own assignments: when
 * bpf_sk_select_reuseport succeeds it raises the chosen worker's load
 * atomically; the worker lowers it when one of its connections closes.
 * Ties rotate: a counter bumped on every decision sets where the scan
 * starts. If the chosen listener cannot be selected (its worker is dying),
 * the next best is tried once. With no live worker, or if both selections
 * fail, it returns SK_PASS without selecting and the kernel falls back to its
 * 4-tuple hash.
 *
 * Only SYNs (and migrations, should the program be invoked for one) are
 * counted: any other segment that reaches the listener lookup (a stray ACK
 * or RST for a connection that no longer exists, a syncookie ACK) is left to
 * the hash, so it does not add a connection that will never be closed. */
#include <linux/bpf.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>

#include "reuseport_select.h"

#define MAX_WORKERS REUSEPORT_SELECT_MAX_WORKERS /* slots */
#define MAX_INDEXES REUSEPORT_SELECT_MAX_INDEXES

/* TCP header: the flags byte, as md->data starts at the TCP header. */
#define TCP_FLAGS_OFFSET 13
#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_ACK 0x10

/* Set by the supervisor before load: how many workers (indexes) there are,
 * and how many slots each has: 2 in process mode (index i in slot i or
 * i + targ_workers, so a reload's new worker has its own), 1 in threads. */
const volatile __u32 targ_workers = 1;
const volatile __u32 targ_slots_per_worker = 1;

/* slot -> that worker's listening socket. */
struct {
	__uint(type, BPF_MAP_TYPE_REUSEPORT_SOCKARRAY);
	__uint(max_entries, MAX_WORKERS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} worker_listeners SEC(".maps");

/* slot -> load and liveness; mmapped by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_WORKERS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct worker_slot);
} worker_slots SEC(".maps");

/* One counter: where the next scan starts, so equal loads take turns. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tie_rotation SEC(".maps");

/* 1 if this lookup is for a new connection: a SYN without ACK, or a
 * connection migrating from a closing listener. */
static __always_inline int new_connection(struct sk_reuseport_md *md)
{
	__u8 *data = md->data, *data_end = md->data_end;

	if (md->migrating_sk)
		return 1;
	if (md->ip_protocol != IPPROTO_TCP)
		return 0;
	if (data + TCP_FLAGS_OFFSET + 1 > data_end)
		return 0;
	return (data[TCP_FLAGS_OFFSET] & (TCP_FLAG_SYN | TCP_FLAG_ACK)) == TCP_FLAG_SYN;
}

/* Finds the live slot with the least load, scanning the indexes from start
 * (each index's slots in turn), leaving out slot skip (MAX_WORKERS: none).
 * Rotating over indexes, not slots, keeps the turns even when half the
 * slots are unused. Returns 1 and sets *best, or 0. */
static __always_inline int pick_least_loaded(__u32 n, __u32 start, __u32 skip, __u32 *best)
{
	struct worker_slot *slot;
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
			__u32 s = i + g * n;
			__s64 load;

			if (g >= targ_slots_per_worker)
				break;
			if (s == skip)
				continue;
			slot = bpf_map_lookup_elem(&worker_slots, &s);
			if (!slot)
				continue;
			if (!*(volatile __u32 *)&slot->live)
				continue;
			load = *(volatile __s64 *)&slot->load;
			if (!found || load < best_load) {
				found = 1;
				*best = s;
				best_load = load;
			}
		}
	}
	return found;
}

SEC("sk_reuseport")
int select_least_loaded(struct sk_reuseport_md *md)
{
	__u32 zero = 0, n = targ_workers, start, best = 0, *rotation;
	struct worker_slot *slot;

	if (!new_connection(md))
		return SK_PASS;
	if (n == 0)
		return SK_PASS;
	if (n > MAX_INDEXES)
		n = MAX_INDEXES;

	rotation = bpf_map_lookup_elem(&tie_rotation, &zero);
	if (!rotation)
		return SK_PASS;
	/* Atomic bump; reading it back separately keeps to the instruction
	 * set clang targets by default (no fetching atomics). Two CPUs may
	 * read the same value: they then only start their scans alike. */
	__sync_fetch_and_add(rotation, 1);
	start = *rotation % n;

	if (!pick_least_loaded(n, start, MAX_WORKERS, &best))
		return SK_PASS; /* no live worker: the kernel's hash decides */
	if (bpf_sk_select_reuseport(md, &worker_listeners, &best, 0) != 0) {
		/* The chosen listener has left the sockarray: its worker is dying
		 * and not yet reaped (a migration from its closing listener is the
		 * common case). Try the next best once; if that fails too,
		 * nothing is selected and SK_PASS lets the hash pick, uncounted. */
		__u32 dying = best;

		if (!pick_least_loaded(n, start, dying, &best) ||
		    bpf_sk_select_reuseport(md, &worker_listeners, &best, 0) != 0)
			return SK_PASS;
	}
	slot = bpf_map_lookup_elem(&worker_slots, &best);
	if (slot)
		__sync_fetch_and_add(&slot->load, 1);
	return SK_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
