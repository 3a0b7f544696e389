/* tracefs.c: tracefs mounted if missing (see tracefs.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "tracefs.h"

int tracefs_ensure(int *mounted, char *err, size_t errlen)
{
	struct stat st;

	*mounted = 0;
	if (stat("/sys/kernel/tracing/events/syscalls", &st) == 0 ||
	    stat("/sys/kernel/debug/tracing/events/syscalls", &st) == 0)
		return 0;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) < 0) {
		snprintf(err, errlen, "tracefs is not mounted and mounting it at /sys/kernel/tracing failed (%s); "
			 "mount it: mount -t tracefs tracefs /sys/kernel/tracing", strerror(errno));
		return -1;
	}
	if (stat("/sys/kernel/tracing/events/syscalls", &st) < 0) {
		snprintf(err, errlen, "tracefs has no syscall tracepoints (events/syscalls): this kernel lacks "
			 "CONFIG_FTRACE_SYSCALLS");
		return -1;
	}
	*mounted = 1;
	return 0;
}

int tracefs_has_event(const char *group, const char *name)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256];
	struct stat st;

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/%s/%s", roots[i], group, name);
		if (stat(path, &st) == 0)
			return 1;
	}
	return 0;
}
