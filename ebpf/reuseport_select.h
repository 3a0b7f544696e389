/* reuseport_select.h: the types reuseport_select.bpf.c (kernel side) and
 * servers/variants/reuseport_bpf.c (user side) share. Fixed-width types only:
 * both compilers must lay the slot out identically. */
#ifndef ACCEPTLAB_REUSEPORT_SELECT_H
#define ACCEPTLAB_REUSEPORT_SELECT_H

#include <linux/types.h>

/* Slots in the maps; must equal MAX_SLOTS in servers/server.h (the user
 * side checks at compile time): two per worker index, so a reload's new
 * worker has an entry of its own while the old one still serves. */
#define REUSEPORT_SELECT_MAX_WORKERS 128
/* Worker indexes: index i has slot i and, in process mode, slot i + workers. */
#define REUSEPORT_SELECT_MAX_INDEXES 64

/* One worker's entry in the worker_slots array (BPF_F_MMAPABLE: the
 * supervisor maps it MAP_SHARED before fork, so every process sees it). */
struct worker_slot {
	/* Connections counted to this worker: raised by the program when it
	 * steers a SYN here, lowered by the worker when one closes, reset to
	 * 0 by the supervisor when the worker is reaped. */
	__s64 load;
	/* 1 once the worker's listener is in the sockarray; 0 before that,
	 * when it stops taking connections, and after it is reaped. */
	__u32 live;
	__u32 pad;
};

#endif
