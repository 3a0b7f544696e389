/* targets.c: finding a server's processes in /proc (see targets.h): by
 * process group from /proc/PID/stat, and by listening socket, matching the
 * inodes of /proc/net/tcp{,6}'s LISTEN sockets against the socket links
 * in every /proc/PID/fd (targets_scan_sockets, which the diagnosis's
 * detection uses too). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "targets.h"

/* A TCP socket in LISTEN: its inode (as /proc/PID/fd links name it) and port. */
struct listener {
	unsigned long inode;
	int port;
};

/* What find_holders does with a process that holds one of the listeners. */
enum on_holder {
	ADD_PID_AND_PORT, /* any process: add it and the listener's port */
	ADD_PORT_OF_PID,  /* t's processes only: add the listener's port */
};

int targets_is_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static int has_pid(const struct targets *t, int pid)
{
	for (int i = 0; i < t->npids; i++)
		if (t->pids[i] == pid)
			return 1;
	return 0;
}

int targets_add_pid(struct targets *t, int pid)
{
	if (has_pid(t, pid))
		return 0;
	if (t->npids == TARGETS_MAX_PIDS)
		return -1;
	t->pids[t->npids++] = pid;
	return 0;
}

static void add_port(struct targets *t, int port)
{
	for (int i = 0; i < t->nports; i++)
		if (t->ports[i] == port)
			return;
	if (t->nports < TARGETS_MAX_PORTS)
		t->ports[t->nports++] = port;
}

static int proc_error(char *err, size_t errlen)
{
	snprintf(err, errlen, "/proc: %s", strerror(errno));
	return -1;
}

int targets_add_pgid(struct targets *t, int pgid, char *err, size_t errlen)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return proc_error(err, errlen);
	while ((de = readdir(d))) {
		char path[300], buf[512], *p;
		int pgrp = -1;
		FILE *f;

		if (!targets_is_digits(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
		    sscanf(p + 1, " %*c %*d %d", &pgrp) == 1 && pgrp == pgid)
			targets_add_pid(t, atoi(de->d_name));
		fclose(f);
	}
	closedir(d);
	return 0;
}

/* The TCP sockets in LISTEN (state 0A) into l[0..max); port > 0 keeps only
 * that local port. Returns how many. */
static int read_listeners(int port, struct listener *l, int max)
{
	static const char *files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	int n = 0;

	for (int k = 0; k < 2; k++) {
		FILE *f = fopen(files[k], "r");
		char line[512];

		if (!f)
			continue;
		if (!fgets(line, sizeof(line), f)) { /* header */
			fclose(f);
			continue;
		}
		while (fgets(line, sizeof(line), f) && n < max) {
			char local[128];
			unsigned lport, state;
			unsigned long inode;
			char *colon;

			if (sscanf(line, " %*d: %127s %*s %x %*s %*s %*s %*d %*d %lu", local, &state, &inode) != 3)
				continue;
			colon = strrchr(local, ':');
			if (!colon || sscanf(colon + 1, "%x", &lport) != 1 || state != 0x0A)
				continue;
			if (port > 0 && (int)lport != port)
				continue;
			l[n].inode = inode;
			l[n].port = (int)lport;
			n++;
		}
		fclose(f);
	}
	return n;
}

int targets_scan_sockets(const unsigned long *inodes, int n, const int *pids, int npids,
			 targets_socket_found found, void *ctx, char *err, size_t errlen)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return proc_error(err, errlen);
	while ((de = readdir(d))) {
		char path[64];
		struct dirent *fe;
		DIR *fd_dir;
		int pid, wanted = !pids;

		if (!targets_is_digits(de->d_name))
			continue;
		pid = atoi(de->d_name);
		for (int i = 0; i < npids && !wanted; i++)
			wanted = pids[i] == pid;
		if (!wanted)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		if (!(fd_dir = opendir(path)))
			continue;
		while ((fe = readdir(fd_dir))) {
			char link[300], target[64];
			unsigned long inode;
			ssize_t len;

			if (!targets_is_digits(fe->d_name))
				continue;
			snprintf(link, sizeof(link), "/proc/%d/fd/%s", pid, fe->d_name);
			len = readlink(link, target, sizeof(target) - 1);
			if (len <= 0)
				continue;
			target[len] = '\0';
			if (sscanf(target, "socket:[%lu]", &inode) != 1)
				continue;
			for (int i = 0; i < n; i++)
				if (inodes[i] == inode)
					found(ctx, pid, atoi(fe->d_name), i);
		}
		closedir(fd_dir);
	}
	closedir(d);
	return 0;
}

/* What find_holders does with each holder it finds. */
struct holder_scan {
	struct targets *t;
	const struct listener *l;
	enum on_holder what;
};

static void add_holder(void *ctx, int pid, int fd, int i)
{
	struct holder_scan *hs = ctx;

	(void)fd;
	if (hs->what == ADD_PID_AND_PORT)
		targets_add_pid(hs->t, pid);
	add_port(hs->t, hs->l[i].port);
}

/* Reads the listeners (port 0: every port) and scans the fds for them:
 * every process (ADD_PID_AND_PORT) or t's (ADD_PORT_OF_PID). */
static int find_holders(struct targets *t, int port, enum on_holder what, char *err, size_t errlen)
{
	struct listener *l = calloc(TARGETS_MAX_LISTENERS, sizeof(*l));
	unsigned long *inodes = calloc(TARGETS_MAX_LISTENERS, sizeof(*inodes));
	struct holder_scan hs = { t, l, what };
	int rc = -1, n;

	if (!l || !inodes) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	n = read_listeners(port, l, TARGETS_MAX_LISTENERS);
	for (int i = 0; i < n; i++)
		inodes[i] = l[i].inode;
	if (what == ADD_PORT_OF_PID)
		rc = targets_scan_sockets(inodes, n, t->pids, t->npids, add_holder, &hs, err, errlen);
	else
		rc = targets_scan_sockets(inodes, n, NULL, 0, add_holder, &hs, err, errlen);
out:
	free(l);
	free(inodes);
	return rc;
}

int targets_add_listeners(struct targets *t, int port, char *err, size_t errlen)
{
	return find_holders(t, port, ADD_PID_AND_PORT, err, errlen);
}

int targets_add_listening_ports(struct targets *t, char *err, size_t errlen)
{
	return find_holders(t, 0, ADD_PORT_OF_PID, err, errlen);
}

int targets_first_missing(const struct targets *t)
{
	for (int i = 0; i < t->npids; i++) {
		char path[64];
		struct stat st;

		snprintf(path, sizeof(path), "/proc/%d", t->pids[i]);
		if (stat(path, &st) < 0)
			return t->pids[i];
	}
	return 0;
}
