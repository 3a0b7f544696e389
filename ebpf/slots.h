/* slots.h: the loaders' side of slots.bpf.h, the records kept by id at
 * the id's place in an array map with a hash beside it. The tracer and the
 * diagnosis fill their traced processes' places before they attach, and
 * read their threads' arrays whole. */
#ifndef ACCEPTLAB_SLOTS_H
#define ACCEPTLAB_SLOTS_H

#include <stddef.h>
#include <linux/types.h>

/* The test switch that shrinks the tracer's and the diagnosis's arrays of
 * threads and processes to N entries each (from 1 to their size), so that
 * a test sends records to the hashes beside them. */
#define SLOTS_TEST_ENV "ACCEPTLAB_TEST_TASK_SLOTS"

struct bpf_map;

/* Shrinks the two arrays threads and procs (before the load) to the size
 * SLOTS_TEST_ENV asks for, if it is from 1 to the smaller of theirs, and
 * returns it; else 0 (the arrays keep theirs). The caller tells its
 * programs the new size. */
__u32 slots_test_shrink(struct bpf_map *threads, struct bpf_map *procs);

/* Puts id at its place (id % nslots) in the array slots_fd, whose entries
 * are the id holding them alone (a __u64: a set of processes), or, where
 * another holds it, in the hash spill_fd with the value one byte 1.
 * Before the programs attach: nothing races it. */
void slots_place(int slots_fd, int spill_fd, __u32 nslots, __u32 id);

/* Reads the array slots_fd, nslots entries of entry_size bytes, into
 * entries: in one call where the kernel batches lookups, else entry by
 * entry. Returns how many entries were read (the ones a failed lookup
 * left out are not among them); each begins with its holder's id, 0 for a
 * free place. */
__u32 slots_read(int slots_fd, __u32 nslots, void *entries, size_t entry_size);

#endif
