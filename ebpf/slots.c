// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* slots.c: see slots.h. */
#include <errno.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "slots.h"

__u32 slots_test_shrink(struct bpf_map *threads, struct bpf_map *procs)
{
	const char *v = getenv(SLOTS_TEST_ENV);
	long n = v ? strtol(v, NULL, 10) : 0;

	if (n <= 0 || (unsigned long)n > bpf_map__max_entries(threads) || (unsigned long)n > bpf_map__max_entries(procs))
		return 0;
	bpf_map__set_max_entries(threads, (__u32)n);
	bpf_map__set_max_entries(procs, (__u32)n);
	return (__u32)n;
}

void slots_place(int slots_fd, int spill_fd, __u32 nslots, __u32 id)
{
	__u32 place = nslots ? id % nslots : 0;
	__u64 held = 0, mine = id;
	__u8 one = 1;

	bpf_map_lookup_elem(slots_fd, &place, &held);
	if (!held)
		bpf_map_update_elem(slots_fd, &place, &mine, BPF_ANY);
	else if (held != mine)
		bpf_map_update_elem(spill_fd, &id, &one, BPF_ANY);
}

__u32 slots_read(int slots_fd, __u32 nslots, void *entries, size_t entry_size)
{
	__u32 *keys = calloc(nslots ? nslots : 1, sizeof(*keys)), count = nslots, out_batch;
	char *at = entries;

	/* One call for the whole array; entry by entry where batches are not had. */
	if (!keys || (bpf_map_lookup_batch(slots_fd, NULL, &out_batch, keys, entries, &count, NULL) < 0 &&
		      errno != ENOENT)) {
		count = 0;
		for (__u32 i = 0; i < nslots; i++)
			if (bpf_map_lookup_elem(slots_fd, &i, at + (size_t)count * entry_size) == 0)
				count++;
	}
	free(keys);
	return count;
}
