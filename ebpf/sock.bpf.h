// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sock.bpf.h: the socket helpers the BPF programs share (the tracer, the
 * diagnosis, the load accounting): the socket behind a descriptor of the
 * calling task, and a socket's local port and network namespace. Include
 * after vmlinux.h and libbpf's bpf_helpers.h, bpf_core_read.h and
 * bpf_endian.h. */
#ifndef ACCEPTLAB_SOCK_BPF_H
#define ACCEPTLAB_SOCK_BPF_H

#define SOCK_TCP_ESTABLISHED 1
#define SOCK_TCP_SYN_RECV 3
#define SOCK_TCP_CLOSE 7
#define SOCK_TCP_LISTEN 10
#define SOCK_S_IFMT 0170000  /* include/uapi/linux/stat.h */
#define SOCK_S_IFSOCK 0140000

/* Kernel memory is read here as the kernel's own types (BTF), each field a
 * plain load the verifier guards, where a bpf_probe_read_kernel is a helper
 * call of its own: at an accept's exit the whole walk, from the task to the
 * socket's ports, is one helper call (the descriptor's slot of the file
 * table: an array the verifier cannot index) and a handful of loads.
 * bpf_rdonly_cast gives a pointer read some other way (or untyped, such as
 * a file's private_data) its type; the verifier inlines it. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

#define SOCK_AS(type, ptr) ((type *)bpf_rdonly_cast((ptr), bpf_core_type_id_kernel(type)))

/* The file behind the calling task's descriptor fd, or NULL. */
static __always_inline struct file *file_of_fd(long fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = task->files->fdt;
	struct file *file = NULL;

	if (!fdt || fd < 0 || fd >= fdt->max_fds)
		return NULL;
	if (bpf_probe_read_kernel(&file, sizeof(file), &fdt->fd[fd]) || !file)
		return NULL;
	return SOCK_AS(struct file, file);
}

/* The socket of a socket's file, or NULL. */
static __always_inline struct sock *sock_of_file(struct file *file)
{
	struct socket *sock = SOCK_AS(struct socket, file->private_data);

	return sock ? sock->sk : NULL;
}

/* The socket behind the calling task's descriptor fd, or NULL when fd is
 * not a socket (its inode's mode says so: private_data means something
 * else for every other kind of file). */
static __always_inline struct sock *sock_of_fd(long fd)
{
	struct file *file = file_of_fd(fd);

	if (!file || (file->f_inode->i_mode & SOCK_S_IFMT) != SOCK_S_IFSOCK)
		return NULL;
	return sock_of_file(file);
}

/* The socket behind the descriptor the calling task's accept has just
 * returned (an accept returns sockets only, so its inode is not asked), or
 * NULL. */
static __always_inline struct sock *sock_of_accepted(long fd)
{
	struct file *file = file_of_fd(fd);

	return file ? sock_of_file(file) : NULL;
}

/* A socket's local port, host order. Read from inet_sport, not skc_num: a
 * move to CLOSE releases the bound port (inet_put_port zeroes skc_num)
 * before inet_sock_set_state fires, so a connection reset, or closed with
 * its request unread, would lose its port if read from skc_num. */
static __always_inline __u16 sk_local_port(const struct sock *sk)
{
	return bpf_ntohs(SOCK_AS(struct inet_sock, sk)->inet_sport);
}

/* The inode of a socket's network namespace (as /proc/PID/ns/net's). */
static __always_inline __u32 sk_netns(const struct sock *sk)
{
	return sk->__sk_common.skc_net.net->ns.inum;
}

#endif
