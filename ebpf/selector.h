/* selector.h: is a BPF program choosing among a port's reuseport sockets
 * (an sk_reuseport program, or a classic one attached with
 * SO_ATTACH_REUSEPORT_CBPF)? Three ways to look, each with what it can
 * miss:
 *  - the iterator (listener_iter.bpf.c, root): every listener's
 *    sk->sk_reuseport_cb->prog, what the kernel consults for each SYN:
 *    misses nothing, but needs root and iter/tcp (Linux 5.9);
 *  - sockarray maps (root): a REUSEPORT_SOCKARRAY whose values (socket
 *    cookies) are the listeners' cookies, and the sk_reuseport program
 *    using that map: misses a map made with 4-byte values (the kernel
 *    returns cookies only to 8-byte ones: reuseport-bpf's own map is such),
 *    a program that picks from a SOCKMAP or SOCKHASH, or picks no socket
 *    from a map; a filled map with no program attached looks like one;
 *  - the holders' descriptors (any user, own processes): a bpf-prog
 *    descriptor whose fdinfo says prog_type 21 (sk_reuseport): misses a
 *    program whose descriptor was closed after attaching (the group keeps
 *    it) or lives in another process; one loaded but not attached looks
 *    like one.
 * Each fills what it learns into the detection's listeners. */
#ifndef ACCEPTLAB_SELECTOR_H
#define ACCEPTLAB_SELECTOR_H

#include "detect.h"

struct selector_found {
	unsigned prog_id;     /* the steering program, 0 none found */
	unsigned prog_type;   /* its type */
	const char *how;      /* "iterator", "sockarray", "prog-fd", or NULL */
	int iterator_ran;     /* the iterator read every listener */
	int sockarray_ran;    /* the map walk ran */
	int prog_fd_ran;      /* the descriptor walk ran */
	char note[256];       /* why a way did not run, when one did not */
};

/* Looks in the ways this process may (root: all three; else the holders'
 * descriptors) until one answers. */
void selector_find(struct detection *d, int root, struct selector_found *out);

#endif
