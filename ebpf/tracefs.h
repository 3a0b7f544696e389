/* tracefs.h: libbpf attaches syscall tracepoints through tracefs; the
 * tracer and the diagnosis mount it when it is missing. */
#ifndef ACCEPTLAB_TRACEFS_H
#define ACCEPTLAB_TRACEFS_H

#include <stddef.h>

/* 0 when tracefs has the syscall tracepoints (*mounted = 1 when this call
 * mounted it at /sys/kernel/tracing), or -1 with err set. */
int tracefs_ensure(int *mounted, char *err, size_t errlen);

#endif
