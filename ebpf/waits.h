/* waits.h: the syscalls a server sleeps in while it waits for work, by this
 * machine's numbers. The BPF programs tell a wakeup in a wait from any
 * other by the syscall the woken thread sleeps in (waits.bpf.h); the
 * loaders put these numbers in their rodata. Shared by the tracer and the
 * diagnosis. */
#ifndef ACCEPTLAB_WAITS_H
#define ACCEPTLAB_WAITS_H

#define WAITS_MAX 9

#ifndef __bpf__
#include <sys/syscall.h>

/* nr[0..WAITS_MAX-1]: the epoll waits and the accepts, and with polls set
 * poll's and select's too; -1 past them (and for any this machine lacks). */
static inline void waits_fill(long nr[WAITS_MAX], int polls)
{
	int n = 0;

	for (int i = 0; i < WAITS_MAX; i++)
		nr[i] = -1;
#ifdef SYS_epoll_wait
	nr[n++] = SYS_epoll_wait;
#endif
#ifdef SYS_epoll_pwait
	nr[n++] = SYS_epoll_pwait;
#endif
#ifdef SYS_epoll_pwait2
	nr[n++] = SYS_epoll_pwait2;
#endif
#ifdef SYS_accept
	nr[n++] = SYS_accept;
#endif
	nr[n++] = SYS_accept4;
	if (!polls)
		return;
#ifdef SYS_poll
	nr[n++] = SYS_poll;
#endif
#ifdef SYS_ppoll
	nr[n++] = SYS_ppoll;
#endif
#ifdef SYS_select
	nr[n++] = SYS_select;
#endif
#ifdef SYS_pselect6
	nr[n++] = SYS_pselect6;
#endif
}
#endif /* !__bpf__ */

#endif
