/* selector.c: which BPF program steers a port's reuseport group (see
 * selector.h): the listener iterator, the REUSEPORT_SOCKARRAY maps, or the
 * holders' program descriptors. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "listener_iter.h"
#include "listener_iter.skel.h"
#include "selector.h"

/* Test switch: look in this one way only (iterator, sockarray, prog-fd),
 * so a test can check each. Unset in normal use. */
#define SELECTOR_WAY_ENV "ACCEPTLAB_TEST_SELECTOR_WAY"

#define PROG_TYPE_SK_REUSEPORT 21
#define MAP_TYPE_REUSEPORT_SOCKARRAY 20

static void found(struct selector_found *out, unsigned id, unsigned type, const char *how)
{
	if (out->prog_id)
		return;
	out->prog_id = id;
	out->prog_type = type;
	out->how = how;
}

static void note(struct selector_found *out, const char *fmt, const char *what, int err)
{
	size_t len = strlen(out->note);

	snprintf(out->note + len, sizeof(out->note) - len, fmt, len ? "; " : "", what, strerror(err));
}

/* ---- the iterator ---- */

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static void by_iterator(struct detection *d, struct selector_found *out)
{
	libbpf_print_fn_t old = libbpf_set_print(quiet_print);
	struct listener_iter_bpf *skel = listener_iter_bpf__open();
	struct bpf_link *link = NULL;
	struct listener_rec r;
	int fd = -1, err;

	if (!skel) {
		note(out, "%s%s: %s", "iterator: open", errno);
		goto out;
	}
	skel->rodata->targ_port = (__u16)d->port;
	if ((err = listener_iter_bpf__load(skel))) {
		note(out, "%s%s: %s", "iterator: load", -err);
		goto out;
	}
	if (!(link = bpf_program__attach_iter(skel->progs.listeners, NULL))) {
		note(out, "%s%s: %s", "iterator: attach", errno);
		goto out;
	}
	if ((fd = bpf_iter_create(bpf_link__fd(link))) < 0) {
		note(out, "%s%s: %s", "iterator: create", errno);
		goto out;
	}
	while (read(fd, &r, sizeof(r)) == (ssize_t)sizeof(r)) {
		for (int i = 0; i < d->nl; i++) {
			struct detect_listener *l = &d->l[i];

			if (l->inode != r.inode)
				continue;
			l->reuseport = r.reuseport;
			l->group = r.group;
			l->prog_id = r.prog_id;
			l->prog_type = r.prog_type;
			if (r.prog_id)
				found(out, r.prog_id, r.prog_type, "iterator");
		}
	}
	out->iterator_ran = 1;
out:
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	listener_iter_bpf__destroy(skel);
	libbpf_set_print(old);
}

/* ---- sockarray maps ---- */

/* The sk_reuseport program that uses map map_id, or 0. */
static unsigned prog_using_map(unsigned map_id)
{
	__u32 id = 0;

	while (bpf_prog_get_next_id(id, &id) == 0) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info), map_ids[64], nmaps;
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.type == PROG_TYPE_SK_REUSEPORT &&
		    info.nr_map_ids) {
			nmaps = info.nr_map_ids < 64 ? info.nr_map_ids : 64;
			memset(&info, 0, sizeof(info));
			info.nr_map_ids = nmaps;
			info.map_ids = (__u64)(unsigned long)map_ids;
			len = sizeof(info);
			if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
				for (__u32 k = 0; k < nmaps; k++)
					if (map_ids[k] == map_id) {
						close(fd);
						return id;
					}
		}
		close(fd);
	}
	return 0;
}

static void by_sockarray(struct detection *d, struct selector_found *out)
{
	__u32 id = 0;
	int err, unreadable = 0;

	while ((err = bpf_map_get_next_id(id, &id)) == 0) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_map_get_fd_by_id(id), hits = 0;

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.type == MAP_TYPE_REUSEPORT_SOCKARRAY &&
		    info.value_size != 8)
			unreadable++; /* the kernel gives cookies back only to 8-byte values */
		else if (info.type == MAP_TYPE_REUSEPORT_SOCKARRAY) {
			for (__u32 k = 0; k < info.max_entries && k < 65536; k++) {
				__u64 cookie;

				if (bpf_map_lookup_elem(fd, &k, &cookie) < 0)
					continue;
				for (int i = 0; i < d->nl; i++)
					hits += d->l[i].cookie == cookie;
			}
		}
		close(fd);
		if (hits) {
			unsigned prog = prog_using_map(id);
			if (prog) {
				for (int i = 0; i < d->nl; i++)
					if (!d->l[i].prog_id)
						d->l[i].prog_id = prog, d->l[i].prog_type = PROG_TYPE_SK_REUSEPORT;
				found(out, prog, PROG_TYPE_SK_REUSEPORT, "sockarray");
			}
		}
	}
	if (errno == ENOENT || err == -ENOENT)
		out->sockarray_ran = 1;
	else
		note(out, "%s%s: %s", "sockarray: map ids", errno);
	if (unreadable && !out->prog_id) {
		size_t len = strlen(out->note);
		snprintf(out->note + len, sizeof(out->note) - len,
			 "%ssockarray: %d REUSEPORT_SOCKARRAY map%s with 4-byte values, whose sockets cannot be read back",
			 len ? "; " : "", unreadable, unreadable == 1 ? "" : "s");
	}
}

/* ---- the holders' program descriptors ---- */

static void by_prog_fds(struct detection *d, struct selector_found *out)
{
	for (int i = 0; i < d->nh; i++) {
		char path[64];
		struct dirent *fe;
		DIR *fd_dir;

		snprintf(path, sizeof(path), "/proc/%d/fd", d->h[i].pid);
		if (!(fd_dir = opendir(path)))
			continue;
		while ((fe = readdir(fd_dir))) {
			char link[300], target[64], line[256];
			unsigned type = 0, prog_id = 0;
			ssize_t len;
			FILE *f;

			snprintf(link, sizeof(link), "/proc/%d/fd/%s", d->h[i].pid, fe->d_name);
			len = readlink(link, target, sizeof(target) - 1);
			if (len <= 0)
				continue;
			target[len] = '\0';
			if (strcmp(target, "anon_inode:bpf-prog") != 0)
				continue;
			snprintf(link, sizeof(link), "/proc/%d/fdinfo/%s", d->h[i].pid, fe->d_name);
			if (!(f = fopen(link, "r")))
				continue;
			while (fgets(line, sizeof(line), f)) {
				sscanf(line, "prog_type: %u", &type);
				sscanf(line, "prog_id: %u", &prog_id);
			}
			fclose(f);
			if (type == PROG_TYPE_SK_REUSEPORT)
				found(out, prog_id, type, "prog-fd");
		}
		closedir(fd_dir);
	}
	out->prog_fd_ran = 1;
}

void selector_find(struct detection *d, int root, struct selector_found *out)
{
	const char *only = getenv(SELECTOR_WAY_ENV);

	memset(out, 0, sizeof(*out));
	if (only && *only) {
		/* The test switch: one way alone. */
		if (!strcmp(only, "iterator") && root)
			by_iterator(d, out);
		else if (!strcmp(only, "sockarray") && root)
			by_sockarray(d, out);
		else if (!strcmp(only, "prog-fd"))
			by_prog_fds(d, out);
		return;
	}
	if (root) {
		by_iterator(d, out);
		if (out->iterator_ran)
			return;
		by_sockarray(d, out);
		if (out->prog_id)
			return;
	}
	by_prog_fds(d, out);
}
