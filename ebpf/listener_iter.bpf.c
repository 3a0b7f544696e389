// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* listener_iter.bpf.c: a BPF iterator over the TCP sockets (iter/tcp) that
 * writes one listener_rec per socket listening on targ_port: its inode,
 * whether SO_REUSEPORT is set, its reuseport group and the program that
 * steers the group (sk->sk_reuseport_cb->prog). It is what the kernel
 * itself consults for each SYN, so it misses nothing a program attached
 * to the group does; it needs root and a kernel with TCP iterators (5.9).
 * Read by selector.c. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "listener_iter.h"
#include "sock.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u16 targ_port = 0;

SEC("iter/tcp")
int listeners(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct listener_rec r = {};
	struct sock_reuseport *cb;
	struct bpf_prog *prog;
	struct tcp_sock *tp;
	struct sock *sk;

	if (!skc || skc->skc_state != SOCK_TCP_LISTEN || skc->skc_num != targ_port)
		return 0;
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp)
		return 0;
	sk = (struct sock *)tp;
	r.port = skc->skc_num;
	r.reuseport = BPF_CORE_READ_BITFIELD_PROBED(skc, skc_reuseport);
	r.inode = BPF_CORE_READ(sk, sk_socket, file, f_inode, i_ino);
	cb = BPF_CORE_READ(sk, sk_reuseport_cb);
	if (cb) {
		r.group = (__u64)cb;
		prog = BPF_CORE_READ(cb, prog);
		if (prog) {
			r.prog_id = BPF_CORE_READ(prog, aux, id);
			r.prog_type = BPF_CORE_READ(prog, type);
		}
	}
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}
