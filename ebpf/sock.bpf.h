// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sock.bpf.h: the socket helpers the BPF programs share (the tracer, the
 * load accounting; the diagnosis reads through sock_btf.bpf.h): the socket
 * behind a descriptor of the calling task, and a socket's local port. Include
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

/* The file behind the calling task's descriptor fd, or NULL. */
static __always_inline struct file *file_of_fd(long fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct file **fdarr = BPF_CORE_READ(task, files, fdt, fd);
	struct file *file = NULL;

	if (!fdarr || fd < 0 || fd > 1 << 20)
		return NULL;
	if (bpf_probe_read_kernel(&file, sizeof(file), &fdarr[fd]))
		return NULL;
	return file;
}

/* The socket of a socket's file, or 0. */
static __always_inline __u64 sock_of_file(struct file *file)
{
	struct socket *sock = BPF_CORE_READ(file, private_data);

	return sock ? (__u64)BPF_CORE_READ(sock, sk) : 0;
}

/* The socket behind the calling task's descriptor fd, or 0 when fd is not
 * a socket (its inode's mode says so: private_data means something else
 * for every other kind of file). */
static __always_inline __u64 sock_of_fd(long fd)
{
	struct file *file = file_of_fd(fd);
	umode_t mode;

	if (!file)
		return 0;
	mode = BPF_CORE_READ(file, f_inode, i_mode);
	if ((mode & SOCK_S_IFMT) != SOCK_S_IFSOCK)
		return 0;
	return sock_of_file(file);
}

/* A socket's local port, host order. Read from inet_sport, not skc_num: a
 * move to CLOSE releases the bound port (inet_put_port zeroes skc_num)
 * before inet_sock_set_state fires, so a connection reset, or closed with
 * its request unread, would lose its port if read from skc_num. */
static __always_inline __u16 sk_local_port(const struct sock *sk)
{
	return bpf_ntohs(BPF_CORE_READ((const struct inet_sock *)sk, inet_sport));
}

#endif
