// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sock_btf.bpf.h: the diagnosis's socket reads. It needs a kernel with
 * tp_btf/sock_recv_length, which came after bpf_rdonly_cast (Linux 6.2), so
 * it reads kernel memory as the kernel's own types (BTF), each field a
 * plain load the verifier guards, where each bpf_probe_read_kernel is a
 * helper call of its own. At an accept's exit the walk from the task to the
 * socket's ports is one helper call (the descriptor's slot of the file
 * table: an array the verifier cannot index) and a handful of loads.
 * bpf_rdonly_cast gives a pointer read some other way (or untyped, such as
 * a file's private_data, or a struct sock that is a tcp_sock) its type; the
 * verifier inlines it. The tracer and the load accounting keep sock.bpf.h's
 * helper reads, which load on older kernels. Include after sock.bpf.h. */
#ifndef ACCEPTLAB_SOCK_BTF_BPF_H
#define ACCEPTLAB_SOCK_BTF_BPF_H

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

#define SOCK_AS(type, ptr) ((type *)bpf_rdonly_cast((ptr), bpf_core_type_id_kernel(type)))

/* The socket behind the descriptor the calling task's accept has just
 * returned (an accept returns sockets only, so its inode is not asked), or
 * NULL. */
static __always_inline struct sock *btf_sock_of_accepted(long fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = task->files->fdt;
	struct file *file = NULL;
	struct socket *sock;

	if (!fdt || fd < 0 || fd >= fdt->max_fds)
		return NULL;
	if (bpf_probe_read_kernel(&file, sizeof(file), &fdt->fd[fd]) || !file)
		return NULL;
	sock = SOCK_AS(struct socket, SOCK_AS(struct file, file)->private_data);
	return sock ? sock->sk : NULL;
}

/* A socket's local port, host order, from inet_sport (as sock.bpf.h's
 * sk_local_port: still there after a move to CLOSE has released skc_num). */
static __always_inline __u16 btf_sk_local_port(const struct sock *sk)
{
	return bpf_ntohs(SOCK_AS(struct inet_sock, sk)->inet_sport);
}

/* The inode of a socket's network namespace (as /proc/PID/ns/net's). */
static __always_inline __u32 btf_sk_netns(const struct sock *sk)
{
	return sk->__sk_common.skc_net.net->ns.inum;
}

#endif
