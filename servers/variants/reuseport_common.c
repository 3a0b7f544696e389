/* reuseport_common.c: see reuseport_common.h. */
#include "reuseport_common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define MIGRATE_SYSCTL "/proc/sys/net/ipv4/tcp_migrate_req"

static int same_netns_as_init(void)
{
	struct stat mine, init;

	if (stat("/proc/self/ns/net", &mine) < 0 || stat("/proc/1/ns/net", &init) < 0)
		return -1;
	return mine.st_ino == init.st_ino && mine.st_dev == init.st_dev;
}

int reuseport_setup_migrate(struct server *srv, char *err, size_t errlen)
{
	FILE *f;
	int init;

	if (!srv->cfg.reuseport_migrate)
		return 0;
	init = same_netns_as_init();
	if (init != 0) {
		snprintf(err, errlen, "--reuseport-migrate: %s; run the server in its own network namespace "
			 "(unshare -n) so net.ipv4.tcp_migrate_req is set there only",
			 init < 0 ? "cannot tell which network namespace this is" :
				    "refusing to change the initial network namespace");
		return -1;
	}
	f = fopen(MIGRATE_SYSCTL, "w");
	if (!f || fputs("1\n", f) < 0 || fclose(f) != 0) {
		snprintf(err, errlen, "--reuseport-migrate: cannot set %s: %s (needs root in the namespace)",
			 MIGRATE_SYSCTL, strerror(errno));
		return -1;
	}
	return 0;
}
