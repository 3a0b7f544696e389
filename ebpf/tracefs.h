/* tracefs.h: libbpf attaches syscall tracepoints through tracefs; the
 * tracer and the diagnosis mount it when it is missing. */
#ifndef ACCEPTLAB_TRACEFS_H
#define ACCEPTLAB_TRACEFS_H

#include <stddef.h>

/* 0 when tracefs has the syscall tracepoints (*mounted = 1 when this call
 * mounted it at /sys/kernel/tracing), or -1 with err set. */
int tracefs_ensure(int *mounted, char *err, size_t errlen);

/* 1 when tracefs (once ensured) lists the tracepoint group:name. */
int tracefs_has_event(const char *group, const char *name);

#endif
