/* variants.c: the registry of accept variants, in --help order, and of
 * the knob sets they read. */
#include "server.h"

#include <stdio.h>
#include <string.h>

extern const struct accept_variant variant_bare, variant_exclusive, variant_exclusive_reorder,
	variant_lt, variant_lt_yield, variant_blocking, variant_reuseport, variant_reuseport_bpf,
	variant_mutex, variant_fdpass, variant_handoff;

const struct accept_variant *const accept_variants[] = {
	&variant_bare,
	&variant_exclusive,
	&variant_exclusive_reorder,
	&variant_lt,
	&variant_lt_yield,
	&variant_blocking,
	&variant_reuseport,
	&variant_reuseport_bpf,
	&variant_mutex,
	&variant_fdpass,
	&variant_handoff,
	NULL,
};

extern const struct knob_set mutex_knobs, reuseport_migrate_knobs, handoff_knobs;

const struct knob_set *const knob_sets_help_order[] = {
	&mutex_knobs,
	&reuseport_migrate_knobs,
	&shared_epoll_knobs,
	&handoff_knobs,
	NULL,
};

const struct accept_variant *variant_find(const char *name)
{
	for (int i = 0; accept_variants[i]; i++)
		if (strcmp(accept_variants[i]->name, name) == 0)
			return accept_variants[i];
	return NULL;
}

void variant_names(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; accept_variants[i] && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", accept_variants[i]->name);
}
