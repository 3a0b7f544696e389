/* reuseport_common.c: see reuseport_common.h. */
#include "reuseport_common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define MIGRATE_SYSCTL "/proc/sys/net/ipv4/tcp_migrate_req"

static int migrate; /* --reuseport-migrate given */

/* A network namespace made for the purpose (unshare -n, ip netns) starts
 * with loopback only; the one a machine's own interfaces live in does not.
 * Returns 1 if this namespace has an interface other than lo, 0 if not,
 * -1 if it cannot tell. (/proc/net/dev is the calling process's namespace.) */
static int netns_has_other_interfaces(void)
{
	char line[512];
	FILE *f = fopen("/proc/net/dev", "r");
	int n = 0, other = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *name = line;
		if (++n <= 2 || !colon)
			continue; /* the two header lines */
		*colon = '\0';
		while (*name == ' ')
			name++;
		if (strcmp(name, "lo") != 0)
			other = 1;
	}
	fclose(f);
	return other;
}

int reuseport_setup_migrate(char *err, size_t errlen)
{
	FILE *f;
	int shared;

	if (!migrate)
		return 0;
	shared = netns_has_other_interfaces();
	if (shared != 0) {
		snprintf(err, errlen, "--reuseport-migrate: %s; run the server in a network namespace of its own "
			 "(unshare -n) so net.ipv4.tcp_migrate_req is set there only",
			 shared < 0 ? "cannot read /proc/net/dev" :
				      "this network namespace has interfaces besides lo, refusing to change its sysctl");
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

int reuseport_migrate_wanted(void)
{
	return migrate;
}

static const struct knob migrate_options[] = {
	{ .name = "--reuseport-migrate",
	  .help = "  --reuseport-migrate   reuseport variants: set net.ipv4.tcp_migrate_req=1 in this\n"
		  "                        network namespace (refused in the initial one; run the\n"
		  "                        server under unshare -n), so a dying worker's queued\n"
		  "                        connections move to a sibling instead of being reset\n",
	  .flag = &migrate },
	{ .name = NULL },
};

const struct knob_set reuseport_migrate_knobs = { .knobs = migrate_options };
