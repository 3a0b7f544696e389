// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* waits.bpf.h: whether a task being woken sleeps in a wait, told without
 * tracing the wait's syscall (every syscall tracepoint a program attaches to
 * is paid by each call of it, and a server waits once or more per request):
 * the task is asleep, not stopped, and the syscall number in its saved
 * registers is one of the loader's (waits.h). Include after vmlinux.h and
 * libbpf's bpf_helpers.h and bpf_core_read.h. */
#ifndef ACCEPTLAB_WAITS_BPF_H
#define ACCEPTLAB_WAITS_BPF_H

#include "waits.h"

#define WAITS_TASK_INTERRUPTIBLE 1 /* include/linux/sched.h */
#define WAITS_TASK_UNINTERRUPTIBLE 2

/* Task p, at its sched_waking, sleeps (a SIGCONT's wakeup of a task stopped
 * inside its wait's syscall is no wakeup for work) in one of the syscalls
 * nr[] names. */
static __always_inline int waking_in_wait(struct task_struct *p, const volatile long *nr)
{
	struct pt_regs *regs;
	long sys;

	if (!(p->__state & (WAITS_TASK_INTERRUPTIBLE | WAITS_TASK_UNINTERRUPTIBLE)))
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(p);
	if (!regs)
		return 0;
#if defined(__TARGET_ARCH_x86)
	sys = regs->orig_ax;
#else
#error "waits.bpf.h: the syscall number's register is known for x86 only"
#endif
	if (sys < 0)
		return 0;
	for (int i = 0; i < WAITS_MAX; i++)
		if (sys == nr[i])
			return 1;
	return 0;
}

#endif
