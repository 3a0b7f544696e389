/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* slots.bpf.h: records kept by id (a thread's tid, a process's tgid) at
 * the id's place in an array map, id % its size, with a hash beside it for
 * an id whose place another holds. Each entry of the array begins with the
 * id holding it (a __u64, 0 free), its record after it; a place is claimed
 * by one compare-and-swap and never freed, so a free place says its id has
 * no record anywhere. Looking up an id without one (most of a machine's
 * threads, at every wakeup) costs one load, where a hash costs a hashing
 * and a bucket's walk; an id with one, a load and a compare.
 *
 * The maps are passed in (the functions are inlined, so each call names
 * its maps); rec_off is where the record begins in an entry (8, or 0 where
 * the entry is the id alone: a pointer then says only that the id is
 * there). The hash's value is the record alone. */
#ifndef ACCEPTLAB_SLOTS_BPF_H
#define ACCEPTLAB_SLOTS_BPF_H

#define SLOT_REC 8 /* an entry's record, after its id */

/* id's record, or NULL if it has none. */
static __always_inline void *slot_find(void *slots, void *spill, __u32 nslots, __u32 id, __u32 rec_off)
{
	__u32 i = nslots ? id % nslots : 0;
	__u64 *s = bpf_map_lookup_elem(slots, &i), held;

	if (!s || !id)
		return NULL;
	held = *(volatile __u64 *)s;
	if (held == id)
		return (char *)s + rec_off;
	return held ? bpf_map_lookup_elem(spill, &id) : NULL;
}

/* id's record, made if it has none: its place claimed if free (the record
 * there is zero: the place was never used), else an entry of the hash
 * made from zero (the hash's record, if it has one already). NULL when
 * the hash is full. A new record's fields are the caller's to set: one
 * with its owner's field still zero is new, or being set by a program
 * that claimed it a moment before. */
static __always_inline void *slot_claim(void *slots, void *spill, __u32 nslots, __u32 id, __u32 rec_off,
					const void *zero)
{
	__u32 i = nslots ? id % nslots : 0;
	__u64 *s = bpf_map_lookup_elem(slots, &i), held;
	void *r;

	if (!s || !id)
		return NULL;
	held = *(volatile __u64 *)s;
	if (!held)
		held = __sync_val_compare_and_swap(s, 0, (__u64)id);
	if (!held || held == id)
		return (char *)s + rec_off;
	if ((r = bpf_map_lookup_elem(spill, &id)))
		return r;
	bpf_map_update_elem(spill, &id, zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(spill, &id);
}

#endif
