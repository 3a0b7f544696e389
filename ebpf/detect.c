/* detect.c: how a running server shares a port (see detect.h): listeners
 * from sock_diag, holders from /proc/PID/fd (targets_scan_sockets), epoll
 * registrations from /proc/PID/fdinfo, waits from
 * /proc/PID/task/TID/syscall. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "detect.h"
#include "targets.h"

#define TCP_LISTEN_STATE 10

/* x86-64 syscall numbers /proc/PID/task/TID/syscall shows. */
#define NR_POLL 7
#define NR_SELECT 23
#define NR_ACCEPT 43
#define NR_EPOLL_WAIT 232
#define NR_PSELECT6 270
#define NR_PPOLL 271
#define NR_EPOLL_PWAIT 281
#define NR_ACCEPT4 288
#define NR_EPOLL_PWAIT2 441

/* ---- listeners: sock_diag ---- */

/* One dump of family's TCP listeners on port into d->l. */
static int dump_family(struct detection *d, int family, int port, char *err, size_t errlen)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
		.nlh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = (unsigned char)family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = 1u << TCP_LISTEN_STATE },
	};
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	static char buf[65536];
	int fd, done = 0;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0) {
		snprintf(err, errlen, "sock_diag: socket: %s", strerror(errno));
		return -1;
	}
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&nl, sizeof(nl)) < 0) {
		snprintf(err, errlen, "sock_diag: send: %s", strerror(errno));
		close(fd);
		return -1;
	}
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "sock_diag: recv: %s", n < 0 ? strerror(errno) : "end of data");
			close(fd);
			return -1;
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			struct inet_diag_msg *m = NLMSG_DATA(h);
			struct detect_listener *l;
			struct rtattr *a;
			int alen;

			if (h->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);
				/* A kernel without IPv6 has no AF_INET6 handler. */
				if (family == AF_INET6 && (e->error == -ENOENT || e->error == -EAFNOSUPPORT)) {
					done = 1;
					break;
				}
				snprintf(err, errlen, "sock_diag: %s", strerror(-e->error));
				close(fd);
				return -1;
			}
			if (ntohs(m->id.idiag_sport) != port || d->nl == DETECT_MAX_LISTENERS)
				continue;
			l = &d->l[d->nl++];
			memset(l, 0, sizeof(*l));
			l->inode = m->idiag_inode;
			l->cookie = (unsigned long long)m->id.idiag_cookie[0] |
				    (unsigned long long)m->id.idiag_cookie[1] << 32;
			l->family = m->idiag_family;
			l->queued = m->idiag_rqueue;
			l->backlog = m->idiag_wqueue;
			l->reuseport = -1;
			inet_ntop(family, m->id.idiag_src, l->addr, sizeof(l->addr));
			alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
			for (a = (struct rtattr *)(m + 1); RTA_OK(a, alen); a = RTA_NEXT(a, alen))
				if (a->rta_type == INET_DIAG_SKV6ONLY && RTA_PAYLOAD(a) >= 1)
					l->v6only = *(unsigned char *)RTA_DATA(a);
		}
	}
	close(fd);
	return 0;
}

int detect_listeners(struct detection *d, int port, char *err, size_t errlen)
{
	d->port = port;
	d->nl = 0;
	if (dump_family(d, AF_INET, port, err, errlen) < 0 || dump_family(d, AF_INET6, port, err, errlen) < 0)
		return -1;
	return d->nl;
}

/* ---- processes ---- */

/* Process pid's parent, state letter and name from /proc/PID/stat; -1 if gone. */
static int read_stat(int pid, int *ppid, char *state, char *comm, size_t commlen)
{
	char path[64], buf[1024], *open_paren, *close_paren;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (!(f = fopen(path, "r")))
		return -1;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok || !(open_paren = strchr(buf, '(')) || !(close_paren = strrchr(buf, ')')))
		return -1;
	if (comm) {
		size_t n = (size_t)(close_paren - open_paren - 1);
		if (n >= commlen)
			n = commlen - 1;
		memcpy(comm, open_paren + 1, n);
		comm[n] = '\0';
	}
	if (sscanf(close_paren + 1, " %c %d", state, ppid) != 2)
		return -1;
	return 0;
}

int detect_process_tree(int pid, int *out, int max)
{
	struct { int pid, ppid; } *all;
	int nall = 0, n = 0, cap = 65536;
	struct dirent *de;
	DIR *d;
	char state;
	int ppid;

	if (read_stat(pid, &ppid, &state, NULL, 0) < 0 || max < 1)
		return 0;
	out[n++] = pid;
	if (!(all = calloc((size_t)cap, sizeof(*all))) || !(d = opendir("/proc"))) {
		free(all);
		return n;
	}
	while ((de = readdir(d)) && nall < cap) {
		if (!targets_is_digits(de->d_name))
			continue;
		all[nall].pid = atoi(de->d_name);
		if (read_stat(all[nall].pid, &all[nall].ppid, &state, NULL, 0) == 0)
			nall++;
	}
	closedir(d);
	/* Breadth first: out[] grows as children are found. */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < nall && n < max; j++)
			if (all[j].ppid == out[i] && all[j].pid != out[i])
				out[n++] = all[j].pid;
	free(all);
	return n;
}

int detect_holder_index(const struct detection *d, int pid)
{
	for (int i = 0; i < d->nh; i++)
		if (d->h[i].pid == pid)
			return i;
	return -1;
}

struct holder_scan {
	struct detection *d;
	const int *pids;
	int npids;
};

static void on_holder_fd(void *ctx, int pid, int fd, int i)
{
	struct holder_scan *hs = ctx;
	struct detection *d = hs->d;
	int k, wanted = !hs->pids;

	for (int j = 0; j < hs->npids && !wanted; j++)
		wanted = hs->pids[j] == pid;
	if (!wanted) {
		d->left_out++;
		return;
	}
	if ((k = detect_holder_index(d, pid)) < 0) {
		struct detect_holder *h;
		struct stat st;
		char path[64], state;

		if (d->nh == DETECT_MAX_HOLDERS)
			return;
		h = &d->h[d->nh++];
		memset(h, 0, sizeof(*h));
		h->pid = pid;
		read_stat(pid, &h->ppid, &state, h->comm, sizeof(h->comm));
		snprintf(path, sizeof(path), "/proc/%d", pid);
		h->uid = stat(path, &st) == 0 ? (int)st.st_uid : -1;
		d->l[i].holders++;
	} else {
		int seen = 0;
		for (int j = 0; j < d->nfds && !seen; j++)
			seen = d->fds[j].pid == pid && d->fds[j].listener == i;
		if (!seen)
			d->l[i].holders++;
	}
	if (d->nfds < DETECT_MAX_FDS)
		d->fds[d->nfds++] = (struct detect_fd){ pid, fd, i };
}

int detect_holders(struct detection *d, const int *pids, int npids, char *err, size_t errlen)
{
	unsigned long inodes[DETECT_MAX_LISTENERS];
	struct holder_scan hs = { d, pids, npids };

	d->nh = d->nfds = d->left_out = 0;
	d->only_pids = pids != NULL;
	for (int i = 0; i < d->nl; i++) {
		inodes[i] = d->l[i].inode;
		d->l[i].holders = 0;
	}
	/* The holders are looked for among every process: --pid's left-out
	 * ones are counted, so the output can say another server shares the
	 * port. */
	return targets_scan_sockets(inodes, d->nl, NULL, 0, on_holder_fd, &hs, err, errlen);
}

/* The listener that process pid holds as fd, or -1. */
static int listener_at(const struct detection *d, int pid, int fd)
{
	for (int i = 0; i < d->nfds; i++)
		if (d->fds[i].pid == pid && d->fds[i].fd == fd)
			return d->fds[i].listener;
	return -1;
}

static int listener_by_inode(const struct detection *d, unsigned long inode)
{
	for (int i = 0; i < d->nl; i++)
		if (d->l[i].inode == inode)
			return i;
	return -1;
}

/* ---- epoll registrations: /proc/PID/fdinfo ---- */

/* The registrations of d's listeners in epoll epfd of process pid, into
 * out[0..max). Returns how many, or -1 when its fdinfo cannot be read. */
static int read_epoll(const struct detection *d, int pid, int epfd, struct detect_reg *out, int max)
{
	char path[64], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, epfd);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned events;
		unsigned long long data;
		unsigned long ino;
		long long pos;
		int tfd, l;

		/* "tfd:        6 events: 10000019 data: ffffffffffffffff  pos:0 ino:239d82b sdev:9" */
		if (sscanf(line, "tfd: %d events: %x data: %llx pos:%lld ino:%lx", &tfd, &events, &data, &pos,
			   &ino) != 5)
			continue;
		if ((l = listener_by_inode(d, ino)) < 0 || n == max)
			continue;
		out[n++] = (struct detect_reg){ pid, epfd, l, events };
	}
	fclose(f);
	return n;
}

void detect_registrations(struct detection *d)
{
	d->nreg = d->nep = 0;
	for (int i = 0; i < d->nh; i++) {
		char path[64];
		struct dirent *fe;
		DIR *fd_dir;

		snprintf(path, sizeof(path), "/proc/%d/fd", d->h[i].pid);
		if (!(fd_dir = opendir(path))) {
			d->h[i].fdinfo_unreadable = 1;
			continue;
		}
		while ((fe = readdir(fd_dir))) {
			char link[300], target[64];
			ssize_t len;
			int epfd, n;

			if (!targets_is_digits(fe->d_name))
				continue;
			snprintf(link, sizeof(link), "/proc/%d/fd/%s", d->h[i].pid, fe->d_name);
			len = readlink(link, target, sizeof(target) - 1);
			if (len <= 0)
				continue;
			target[len] = '\0';
			if (strcmp(target, "anon_inode:[eventpoll]") != 0)
				continue;
			epfd = atoi(fe->d_name);
			if ((n = read_epoll(d, d->h[i].pid, epfd, &d->reg[d->nreg], DETECT_MAX_REGS - d->nreg)) < 0) {
				d->h[i].fdinfo_unreadable = 1;
				continue;
			}
			d->nreg += n;
			if (d->nep < DETECT_MAX_EPOLLS)
				d->ep[d->nep++] = (struct detect_epoll){ d->h[i].pid, epfd };
		}
		closedir(fd_dir);
	}
}

int detect_epoll_listeners(const struct detection *d, int pid, int epfd, unsigned *events)
{
	struct detect_reg regs[16];
	int n = read_epoll(d, pid, epfd, regs, 16);

	*events = 0;
	for (int i = 0; i < n; i++)
		*events |= regs[i].events;
	return n < 0 ? -1 : n > 0;
}

/* The registration of any listener in process pid's epoll epfd, or NULL. */
static const struct detect_reg *reg_in(const struct detection *d, int pid, int epfd)
{
	for (int i = 0; i < d->nreg; i++)
		if (d->reg[i].pid == pid && d->reg[i].epfd == epfd)
			return &d->reg[i];
	return NULL;
}

/* ---- waits: /proc/PID/task/TID/syscall ---- */

static struct detect_thread *thread_slot(struct detection *d, int pid, int tid)
{
	struct detect_thread *t;
	char path[96];
	FILE *f;

	for (int i = 0; i < d->nt; i++)
		if (d->t[i].tid == tid)
			return &d->t[i];
	if (d->nt == DETECT_MAX_THREADS)
		return NULL;
	t = &d->t[d->nt++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->listener = -1;
	t->fd = -1;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	if ((f = fopen(path, "r"))) {
		if (fgets(t->comm, sizeof(t->comm), f))
			t->comm[strcspn(t->comm, "\n")] = '\0';
		fclose(f);
	}
	return t;
}

/* One look at thread tid of holder h: what it waits in now. */
static void sample_thread(struct detection *d, struct detect_holder *h, int tid)
{
	char path[96], line[512];
	struct detect_thread *t;
	enum detect_wait w = WAIT_UNSEEN;
	unsigned long long a1 = 0;
	const struct detect_reg *r;
	int nr = -1, fd, l = -1;
	unsigned events = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", h->pid, tid);
	if (!(f = fopen(path, "r"))) {
		h->fdinfo_unreadable = 1;
		return;
	}
	if (!fgets(line, sizeof(line), f)) {
		/* Another user's thread: the read is refused (EACCES). */
		h->fdinfo_unreadable = 1;
		line[0] = '\0';
	}
	fclose(f);
	if (!(t = thread_slot(d, h->pid, tid)))
		return;
	/* "281 0x3 0x7ffd... ..." (blocked in a syscall), "running", or "-1 ..." */
	if (sscanf(line, "%d %llx", &nr, &a1) != 2)
		return;
	fd = (int)a1;
	switch (nr) {
	case NR_EPOLL_WAIT:
	case NR_EPOLL_PWAIT:
	case NR_EPOLL_PWAIT2:
		if ((r = reg_in(d, h->pid, fd))) {
			w = WAIT_EPOLL;
			l = r->listener;
			events = r->events;
		} else {
			w = WAIT_EPOLL_WITHOUT;
		}
		break;
	case NR_ACCEPT:
	case NR_ACCEPT4:
		if ((l = listener_at(d, h->pid, fd)) >= 0)
			w = WAIT_ACCEPT;
		break;
	case NR_POLL:
	case NR_PPOLL:
	case NR_SELECT:
	case NR_PSELECT6:
		w = WAIT_POLL;
		break;
	default:
		break;
	}
	if (w > t->wait) {
		t->wait = w;
		t->fd = fd;
		t->listener = l;
		t->events = events;
	}
}

void detect_waits(struct detection *d, int samples, int gap_ms)
{
	for (int s = 0; s < samples; s++) {
		if (s) {
			struct timespec ts = { gap_ms / 1000, (gap_ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		}
		for (int i = 0; i < d->nh; i++) {
			char path[64];
			struct dirent *te;
			DIR *task;

			snprintf(path, sizeof(path), "/proc/%d/task", d->h[i].pid);
			if (!(task = opendir(path)))
				continue;
			while ((te = readdir(task)))
				if (targets_is_digits(te->d_name))
					sample_thread(d, &d->h[i], atoi(te->d_name));
			closedir(task);
		}
	}
	/* Threads of one process waiting on one epoll descriptor share it. */
	for (int i = 0; i < d->nt; i++)
		for (int j = 0; j < d->nt; j++)
			if (i != j && d->t[i].pid == d->t[j].pid && d->t[i].fd == d->t[j].fd &&
			    (d->t[i].wait == WAIT_EPOLL || d->t[i].wait == WAIT_EPOLL_WITHOUT) &&
			    d->t[j].wait == d->t[i].wait)
				d->t[i].epoll_shared = 1;
}

/* ---- still there? ---- */

int detect_holders_alive(const struct detection *d)
{
	for (int i = 0; i < d->nh; i++) {
		int ppid;
		char state;

		if (read_stat(d->h[i].pid, &ppid, &state, NULL, 0) == 0 && state != 'Z' && state != 'X')
			return 1;
	}
	return 0;
}

/* Of d's listeners (by inode), how many listen now, and into *queued the
 * connections waiting in their accept queues; -1 if sock_diag cannot tell. */
static int listeners_now(const struct detection *d, long *queued)
{
	static struct detection now;
	char err[DETECT_ERR_LEN];
	int n = 0;

	*queued = 0;
	if (detect_listeners(&now, d->port, err, sizeof(err)) < 0)
		return -1;
	for (int i = 0; i < now.nl; i++)
		if (listener_by_inode(d, now.l[i].inode) >= 0) {
			n++;
			*queued += now.l[i].queued;
		}
	return n;
}

long detect_queued(const struct detection *d)
{
	long queued;

	return listeners_now(d, &queued) < 0 ? -1 : queued;
}

int detect_listening(const struct detection *d)
{
	long queued;
	int n = listeners_now(d, &queued);

	return n < 0 || n > 0; /* cannot tell: assume it still does */
}
