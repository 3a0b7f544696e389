/* detect.h: how a running server shares a port, read without touching it:
 * the sockets listening on the port (sock_diag), the processes holding
 * them (/proc/PID/fd, through targets.c), the epoll registrations of those
 * sockets (/proc/PID/fdinfo: EPOLLEXCLUSIVE, EPOLLET) and what each thread
 * of those processes is waiting in (/proc/PID/task/TID/syscall). Needs no
 * BPF and no root for the user's own processes; another user's processes
 * are counted as unreadable. Reports errors through a buffer and never
 * prints or exits. The reuseport selector is selector.h's. */
#ifndef ACCEPTLAB_DETECT_H
#define ACCEPTLAB_DETECT_H

#include <stddef.h>

#define DETECT_MAX_LISTENERS 256
#define DETECT_MAX_HOLDERS 1024
#define DETECT_MAX_FDS 4096      /* (process, descriptor) pairs holding a listener */
#define DETECT_MAX_REGS 4096     /* listener registrations in epolls */
#define DETECT_MAX_EPOLLS 1024   /* the holders' epolls */
#define DETECT_MAX_THREADS 8192  /* threads of the holders */
#define DETECT_ERR_LEN 256

#define DETECT_EPOLLEXCLUSIVE (1u << 28)
#define DETECT_EPOLLET (1u << 31)

/* A socket listening on the port. */
struct detect_listener {
	unsigned long inode;
	unsigned long long cookie;  /* the kernel's socket cookie (a REUSEPORT_SOCKARRAY's values) */
	int family;                 /* AF_INET or AF_INET6 */
	char addr[64];              /* its local address, as text ("0.0.0.0", "::") */
	int v6only;                 /* IPV6_V6ONLY (AF_INET6), else 0 */
	unsigned queued;            /* connections waiting in its accept queue now */
	unsigned backlog;           /* its accept queue's limit */
	int holders;                /* processes holding a descriptor of it */
	/* From selector.h (root): */
	int reuseport;              /* SO_REUSEPORT set: 1, 0, or -1 unknown */
	unsigned long long group;   /* its reuseport group (the kernel's), 0 none or unknown */
	unsigned prog_id;           /* the BPF program steering its group, 0 none */
	unsigned prog_type;         /* that program's type */
};

/* A process holding one of the listeners. */
struct detect_holder {
	int pid;
	int ppid;
	int uid;
	char comm[16];
	int fdinfo_unreadable;      /* its fdinfo or task files could not be read */
};

/* Process pid holds listener l[listener] as descriptor fd. */
struct detect_fd {
	int pid;
	int fd;
	int listener;
};

/* Listener l[listener] is registered in process pid's epoll epfd. */
struct detect_reg {
	int pid;
	int epfd;
	int listener;
	unsigned events;            /* the registration's events mask */
};

/* Process pid has an epoll as descriptor epfd (a listener in it or not). */
struct detect_epoll {
	int pid;
	int epfd;
};

/* What a holder's thread was seen waiting in, strongest evidence first
 * when sampled more than once. */
enum detect_wait {
	WAIT_UNSEEN = 0,            /* running, or in a syscall that waits on nothing of the port */
	WAIT_POLL,                  /* poll/select: which descriptors, /proc does not say */
	WAIT_EPOLL_WITHOUT,         /* epoll_wait on an epoll without a listener */
	WAIT_ACCEPT,                /* accept/accept4 on a listener, blocking */
	WAIT_EPOLL,                 /* epoll_wait on an epoll holding a listener */
};

struct detect_thread {
	int pid;
	int tid;
	char comm[16];
	enum detect_wait wait;
	int fd;                     /* the epoll's or the listener's descriptor */
	int listener;               /* WAIT_ACCEPT, WAIT_EPOLL: which, -1 otherwise */
	unsigned events;            /* WAIT_EPOLL: the listener's registration in that epoll */
	int epoll_shared;           /* WAIT_EPOLL*: another thread of its process waits on the same epoll */
};

struct detection {
	int port;
	struct detect_listener l[DETECT_MAX_LISTENERS];
	int nl;
	struct detect_holder h[DETECT_MAX_HOLDERS];
	int nh;
	struct detect_fd fds[DETECT_MAX_FDS];
	int nfds;
	struct detect_reg reg[DETECT_MAX_REGS];
	int nreg;
	struct detect_epoll ep[DETECT_MAX_EPOLLS];
	int nep;
	struct detect_thread t[DETECT_MAX_THREADS];
	int nt;
	int only_pids;              /* holders were restricted (--pid) */
	int left_out;               /* holders found outside that restriction */
};

/* The sockets listening on TCP port (IPv4 and IPv6) into d->l, from
 * sock_diag (NETLINK_SOCK_DIAG, unprivileged). Returns how many, or -1
 * with err set. */
int detect_listeners(struct detection *d, int port, char *err, size_t errlen);

/* pid and every process descending from it (by /proc/PID/stat's ppid) into
 * out[0..max): a server's process tree. Returns how many (0: no pid). */
int detect_process_tree(int pid, int *out, int max);

/* The processes holding d's listeners (pids != NULL: only those, the rest
 * counted in d->left_out) into d->h and d->fds; each listener's holders.
 * 0, or -1 with err set. */
int detect_holders(struct detection *d, const int *pids, int npids, char *err, size_t errlen);

/* Each holder's epolls, into d->ep, and their registrations of a
 * listener, into d->reg. */
void detect_registrations(struct detection *d);

/* Whether process pid's epoll epfd registers one of d's listeners now: 1
 * (*events: the registrations' masks, OR'ed), 0, or -1 when its fdinfo
 * cannot be read (the epoll or its process is gone). */
int detect_epoll_listeners(const struct detection *d, int pid, int epfd, unsigned *events);

/* The holders' threads and what each waits in, sampled `samples` times
 * gap_ms apart (the strongest evidence kept), into d->t. */
void detect_waits(struct detection *d, int samples, int gap_ms);

/* The index of holder pid in d->h, or -1. */
int detect_holder_index(const struct detection *d, int pid);

/* 1 if any of d's holders (every process, when none were readable) is
 * still alive (not gone, not a zombie). */
int detect_holders_alive(const struct detection *d);

/* 1 if any of d's listeners still listens (by inode). */
int detect_listening(const struct detection *d);

/* The connections waiting in the accept queues of the port's listeners
 * now (sock_diag), of those detection found; -1 if it cannot tell. */
long detect_queued(const struct detection *d);

#endif
