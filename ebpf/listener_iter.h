/* listener_iter.h: the record listener_iter.bpf.c writes per listening
 * socket, and selector.c reads. */
#ifndef ACCEPTLAB_LISTENER_ITER_H
#define ACCEPTLAB_LISTENER_ITER_H

struct listener_rec {
	__u64 inode;        /* the socket's inode (as /proc/PID/fd names it) */
	__u64 group;        /* its reuseport group (the kernel's sock_reuseport, as an address), 0 none */
	__u32 prog_id;      /* the BPF program steering that group, 0 none */
	__u32 prog_type;    /* its type (BPF_PROG_TYPE_SK_REUSEPORT, or a socket filter) */
	__u16 port;
	__u8 reuseport;     /* SO_REUSEPORT is set on it */
	__u8 pad[5];
};

#endif
