/* exclusive_model.c: exclusive-model, the EPOLLEXCLUSIVE wake-up model. No
 * HTTP: N child processes, each with its own epoll instance holding one
 * shared listener with EPOLLIN | EPOLLEXCLUSIVE; the parent makes K
 * connections, one every G ms, and records which child was woken and which
 * accepted each one.
 *
 * The rule under test, from the kernel source (Linux 6.x):
 *  - EPOLL_CTL_ADD with EPOLLEXCLUSIVE queues the epitem's wait entry on the
 *    listener's wait queue with add_wait_queue_exclusive(), i.e. at the TAIL
 *    (fs/eventpoll.c ep_ptable_queue_proc; kernel/sched/wait.c). So the
 *    queue holds the children in the order they registered.
 *  - A new connection calls sk_data_ready -> sock_def_readable ->
 *    wake_up_interruptible_sync_poll(), nr_exclusive = 1. __wake_up_common()
 *    walks the queue from the HEAD and stops after the first EXCLUSIVE entry
 *    whose callback returns non-zero.
 *  - That callback, ep_poll_callback(), always puts the listener on that
 *    epoll's ready list, but returns 1 (consuming the one exclusive wake)
 *    only if waitqueue_active(&ep->wq): a thread is asleep in epoll_wait()
 *    on that epoll. A child that is busy elsewhere returns 0, the walk goes
 *    on to the next entry; the busy child finds the event on its ready list
 *    the next time it calls epoll_wait (and, level-triggered, sees it only if
 *    the queue is still non-empty then: ep_send_events re-polls the item).
 *  So: each connection wakes the FIRST-REGISTERED child that is idle (asleep
 * in epoll_wait) at that moment; with every child idle, the first-registered
 * child takes everything. The order is registration order, not fork order,
 * pid or index (--order shows it), and the rule ignores load entirely.
 *
 * The parent controls the registration order (child order[i] registers only
 * after order[i-1] said it had), knows which children are idle from their
 * reports (each child says "idle" just before epoll_wait, and the parent
 * connects no sooner than IDLE_SETTLE_MS after such a report), predicts the
 * winner of each connection by the rule and prints whether it held.
 * --busy-ms B makes a child stay busy B ms after each accept (a request
 * being served), so later connections must pass over it.
 *
 * --no-exclusive registers plain EPOLLIN instead: add_wait_queue() puts
 * each entry at the HEAD (after any WQ_FLAG_PRIORITY entries), every
 * callback returns 1 but none is exclusive, so the walk never stops early:
 * EVERY idle child is woken (the last-registered first) and one accept
 * wins: the bare race with one accept per wake-up, measured without HTTP.
 * There is no winner to predict, and "every idle child is woken" cannot be
 * seen from user space: a woken child whose epoll_wait re-polls the listener
 * after the winner emptied it (ep_send_events finds no event) goes back to
 * sleep inside epoll_wait. "woken" here means "epoll_wait returned".
 *
 * Timing: on loopback the handshake runs inside the parent's connect() (the
 * final ACK is processed when connect() releases the socket lock to wait),
 * and that ACK is what wakes the children, some µs (about 10 on our VM)
 * before connect() returns. So wake_us (per child, from connect()'s start)
 * over-counts the wake-up-to-epoll_wait-return time by up to connect_us, and
 * wake_after_connect_us (from its return) under-counts it by those µs,
 * negative when a child on another CPU ran before connect() returned.
 * --trigger eventfd removes that uncertainty: the children's epolls hold one
 * eventfd instead of the listener, a "connection" is the parent's
 * write(eventfd, 1) (which runs the wake-up walk synchronously, the same
 * ep_poll_callback path, so the same rule), and "accepting" is a
 * non-blocking read of the counter. wake_us is then the wake-up-to-
 * epoll_wait-return latency within the write's own duration (a few µs).
 * With --no-exclusive as well, it is a latency probe: the children register
 * EPOLLIN|EPOLLET and nobody reads the counter (the parent resets it once
 * every idle child has reported), so EVERY child woken by each write
 * returns from epoll_wait and reports its own latency. That is the bare
 * race's wake-up, without the accept that would hide the losers, and it is
 * what models/skew.py takes as its per-worker wake-to-accept latencies
 * until the tracer's histograms exist. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROG "exclusive-model"
#include "../common/cli.h"
#define MAX_PROCESSES 64
#define MAX_CONNECTIONS 1000
#define REPLY_TIMEOUT_MS 2000  /* a child must answer (registered / accepted) within this */
#define IDLE_SETTLE_MS 2       /* an "idle" report at least this old, and ... */
#define ASLEEP_WAIT_MS 2000    /* ... every child settled by /proc's account, awaited this long */
#define LATE_WAKE_MS 5         /* after the last connection, wait this long for stray wakes */

enum report_kind { R_REGISTERED, R_IDLE, R_WOKEN, R_ACCEPTED, R_EAGAIN, R_ERROR };

/* What a child tells the parent; under PIPE_BUF, so every write is atomic. */
struct report {
	int32_t child;
	int32_t kind;
	int32_t value;   /* R_ACCEPTED: the client's port; R_ERROR: errno */
	int32_t pad;
	int64_t t_ns;    /* CLOCK_MONOTONIC */
};

struct options {
	int processes, connections, gap_ms, busy_ms, port, json, no_exclusive;
	int eventfd_trigger; /* --trigger eventfd */
	int order[MAX_PROCESSES]; /* order[i]: the child that registers i-th */
	int has_order;
};

static struct options opt = { .processes = 4, .connections = 16, .gap_ms = 20 };

/* What the parent knows of each child. */
struct child {
	pid_t pid;
	int go_fd;           /* parent -> child: "register now" */
	int idle;            /* its last report was R_IDLE */
	int64_t idle_since;  /* t_ns of that report */
	int64_t registered_at; /* t_ns of its "registered" report */
	long woken, accepted, eagain;
};

/* One connection, as recorded. */
struct conn {
	int client_fd, client_port;
	int64_t t_connect_start, t_connect_end;
	double connect_us;   /* the connect() call */
	int idle[MAX_PROCESSES], n_idle;    /* idle children when it was made */
	int woken[MAX_PROCESSES], n_woken;  /* children woken while it was the newest */
	int eagain[MAX_PROCESSES], n_eagain;
	int predicted;       /* exclusive: the rule's winner; -1: no child was idle, or --no-exclusive */
	double wake_child_us[MAX_PROCESSES]; /* each child's epoll_wait return after connect() began; NAN: none */
	int winner;          /* -1: nobody accepted it */
	int winners;         /* how many children accepted it (must be 1) */
	double wake_us, accept_us; /* the first wake-up, and the winner's accept, after connect() returned */
};

static struct child children[MAX_PROCESSES];
static int latency_probe; /* --trigger eventfd --no-exclusive: wake-ups only, no accepts */
static int n_children;
static struct conn conns[MAX_CONNECTIONS];

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [--processes N] [--connections K] [--gap-ms G] [--busy-ms B]\n"
		"                       [--order LIST] [--port P] [--no-exclusive]\n"
		"                       [--trigger tcp|eventfd] [--json]\n"
		"\n"
		"N child processes each add one shared listener to their own epoll with\n"
		"EPOLLIN|EPOLLEXCLUSIVE, in a controlled order, then loop: epoll_wait, accept\n"
		"(non-blocking, may get EAGAIN), report. The parent makes K connections, one every\n"
		"G ms, and prints the registration order, for each connection the idle children,\n"
		"the child(ren) woken and the winner, per-child counts, and whether every winner\n"
		"matched the rule \"the first-registered idle waiter wins\" (Linux 6.x: see\n"
		"models/README.md and the comment at the top of models/exclusive_model.c).\n"
		"\n"
		"  --processes N    children, 1..%d (default 4)\n"
		"  --connections K  connections, 1..%d (default 16)\n"
		"  --gap-ms G       between connections, 0..10000 (default 20: every idle child is\n"
		"                   back in epoll_wait before the next one)\n"
		"  --busy-ms B      each child stays busy B ms after an accept, 0..10000 (default 0)\n"
		"  --order LIST     registration order, a permutation of 0..N-1 such as 2,0,3,1\n"
		"                   (default 0,1,...,N-1)\n"
		"  --port P         listener port on 127.0.0.1 (default 0: the kernel picks one)\n"
		"  --no-exclusive   register plain EPOLLIN (the bare race, one accept per wake-up):\n"
		"                   checks instead that every idle child is woken, and records each\n"
		"                   child's wake-up latency\n"
		"  --trigger T      tcp (default): connections to a listener; eventfd: the epolls\n"
		"                   hold an eventfd, a \"connection\" is one write(2) to it and\n"
		"                   \"accept\" a non-blocking read: the wake-up happens inside that\n"
		"                   write, so wake_us is the wake-up latency itself; with\n"
		"                   --no-exclusive, a latency probe: EPOLLET, nobody reads, every idle\n"
		"                   child is woken by each write and reports its latency\n"
		"  --json           one JSON object per line: registration, each connection, summary\n"
		"\n"
		"Exit: 0 ok (whether or not the rule held: that is the finding, printed); 1 a\n"
		"connection was not accepted by exactly one child, or a child failed; 2 usage error.\n",
		MAX_PROCESSES, MAX_CONNECTIONS);
}

static void parse_order(const char *s)
{
	char buf[1024], *tok, *save = NULL;
	int n = 0;

	if (strlen(s) >= sizeof(buf))
		bad_arg("--order %s: too long", s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == MAX_PROCESSES)
			bad_arg("--order %s: more than %d entries", s, MAX_PROCESSES);
		opt.order[n++] = (int)parse_long("--order entry", tok, 0, MAX_PROCESSES - 1);
	}
	opt.has_order = n;
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "processes", required_argument, NULL, 'n' },
		{ "connections", required_argument, NULL, 'k' },
		{ "gap-ms", required_argument, NULL, 'g' },
		{ "busy-ms", required_argument, NULL, 'b' },
		{ "order", required_argument, NULL, 'o' },
		{ "port", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-exclusive", no_argument, NULL, 'x' },
		{ "trigger", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *order_arg = NULL;
	int c, seen[MAX_PROCESSES] = { 0 };

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': opt.processes = (int)parse_long("--processes", optarg, 1, MAX_PROCESSES); break;
		case 'k': opt.connections = (int)parse_long("--connections", optarg, 1, MAX_CONNECTIONS); break;
		case 'g': opt.gap_ms = (int)parse_long("--gap-ms", optarg, 0, 10000); break;
		case 'b': opt.busy_ms = (int)parse_long("--busy-ms", optarg, 0, 10000); break;
		case 'o': order_arg = optarg; parse_order(optarg); break;
		case 'p': opt.port = (int)parse_long("--port", optarg, 0, 65535); break;
		case 'j': opt.json = 1; break;
		case 'x': opt.no_exclusive = 1; break;
		case 't':
			if (strcmp(optarg, "tcp") == 0)
				opt.eventfd_trigger = 0;
			else if (strcmp(optarg, "eventfd") == 0)
				opt.eventfd_trigger = 1;
			else
				bad_arg("--trigger %s: expected tcp or eventfd", optarg);
			break;
		case 'h': usage(stdout); exit(0);
		case ':': bad_arg("%s: needs a value", argv[optind - 1]);
		default:  bad_arg("%s: unknown argument", argv[optind - 1]);
		}
	}
	if (optind < argc)
		bad_arg("%s: unexpected argument", argv[optind]);
	if (opt.eventfd_trigger && opt.port)
		bad_arg("--port %d: no listener with --trigger eventfd", opt.port);
	latency_probe = opt.eventfd_trigger && opt.no_exclusive;
	if (latency_probe && opt.busy_ms)
		bad_arg("--busy-ms %d: the latency probe (--trigger eventfd --no-exclusive) has no accepts",
			opt.busy_ms);
	if (!opt.has_order) {
		for (int i = 0; i < opt.processes; i++)
			opt.order[i] = i;
		return;
	}
	if (opt.has_order != opt.processes)
		bad_arg("--order %s: %d entries for %d processes", order_arg, opt.has_order, opt.processes);
	for (int i = 0; i < opt.processes; i++) {
		if (opt.order[i] >= opt.processes || seen[opt.order[i]]++)
			bad_arg("--order %s: not a permutation of 0..%d", order_arg, opt.processes - 1);
	}
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Stops every child: SIGKILL, then reaps it. Safe to call twice. */
static void stop_children(void)
{
	for (int i = 0; i < n_children; i++)
		if (children[i].pid > 0)
			kill(children[i].pid, SIGKILL);
	for (int i = 0; i < n_children; i++) {
		if (children[i].pid > 0) {
			while (waitpid(children[i].pid, NULL, 0) < 0 && errno == EINTR)
				;
			children[i].pid = 0;
		}
		if (children[i].go_fd >= 0)
			close(children[i].go_fd);
		children[i].go_fd = -1;
	}
}

static void __attribute__((noreturn, format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	stop_children();
	va_start(ap, fmt);
	vdie(1, "", fmt, ap);
}

static void on_signal(int sig)
{
	/* Children die with us (PR_SET_PDEATHSIG); just leave, with the signal's status. */
	signal(sig, SIG_DFL);
	raise(sig);
}

static void child_report_at(int fd, int index, int kind, int value, int64_t t_ns)
{
	struct report r = { .child = index, .kind = kind, .value = value, .t_ns = t_ns };

	/* A write of under PIPE_BUF bytes to a pipe is atomic; a failed one means the parent is gone. */
	if (write(fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(1);
}

static void child_report(int fd, int index, int kind, int value)
{
	child_report_at(fd, index, kind, value, now_ns());
}

/* The "accept" of --trigger eventfd: take the counter if it is still there. */
static int take_eventfd(int efd)
{
	uint64_t v;

	return read(efd, &v, sizeof(v)) == (ssize_t)sizeof(v) ? 0 : -1;
}

/* The child: wait for the go, register, then epoll_wait / accept / report forever. */
static void __attribute__((noreturn)) child_main(int index, int listener, int go_fd, int report_fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = listener }, out[8];
	char go;
	int ep;

	if (!opt.no_exclusive)
		ev.events |= EPOLLEXCLUSIVE;
	if (latency_probe)
		ev.events |= EPOLLET; /* every write is one edge; nobody consumes it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
	if (read(go_fd, &go, 1) != 1)
		_exit(1);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, listener, &ev) < 0) {
		child_report(report_fd, index, R_ERROR, errno);
		_exit(1);
	}
	child_report(report_fd, index, R_REGISTERED, 0);
	for (;;) {
		struct sockaddr_in peer;
		socklen_t len = sizeof(peer);
		int64_t t_wake, t_accept;
		int n, fd;

		child_report(report_fd, index, R_IDLE, 0);
		n = epoll_wait(ep, out, 8, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			child_report(report_fd, index, R_ERROR, errno);
			_exit(1);
		}
		/* One accept per wake-up, as an EPOLLEXCLUSIVE server does. Both
		 * times are taken before any report, so the pipe writes (which wake
		 * the parent) stay out of the latencies. */
		t_wake = now_ns();
		if (latency_probe) {
			child_report_at(report_fd, index, R_WOKEN, n, t_wake);
			continue;
		}
		if (opt.eventfd_trigger)
			fd = take_eventfd(listener);
		else
			fd = accept4(listener, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);
		t_accept = now_ns();
		child_report_at(report_fd, index, R_WOKEN, n, t_wake);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED || errno == EINTR) {
				child_report_at(report_fd, index, R_EAGAIN, errno, t_accept);
				continue;
			}
			child_report(report_fd, index, R_ERROR, errno);
			_exit(1);
		}
		if (opt.eventfd_trigger) {
			child_report_at(report_fd, index, R_ACCEPTED, -1, t_accept);
		} else {
			child_report_at(report_fd, index, R_ACCEPTED, ntohs(peer.sin_port), t_accept);
			close(fd);
		}
		if (opt.busy_ms)
			sleep_ms(opt.busy_ms);
	}
}

/* Reads one report, waiting until deadline_ns. Returns 1, or 0 on timeout. */
static int read_report(int fd, struct report *r, int64_t deadline_ns)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = deadline_ns - now_ns();
		ssize_t got;

		if (left <= 0)
			return 0;
		if (poll(&p, 1, (int)((left + 999999) / 1000000)) < 0) {
			if (errno == EINTR)
				continue;
			fail("poll: %s", strerror(errno));
		}
		if (!(p.revents & (POLLIN | POLLHUP)))
			continue;
		got = read(fd, r, sizeof(*r));
		if (got == (ssize_t)sizeof(*r))
			break;
		if (got < 0 && errno == EINTR)
			continue;
		fail("a child's report pipe closed or was torn (read %zd bytes)", got);
	}
	if (r->child < 0 || r->child >= n_children)
		fail("a report from an unknown child %d", r->child);
	return 1;
}

static void add_unique(int *set, int *n, int v)
{
	for (int i = 0; i < *n; i++)
		if (set[i] == v)
			return;
	set[(*n)++] = v;
}

/* Applies one report to the parent's view; `current` is the newest connection (-1: none yet). */
static void apply_report(const struct report *r, int current)
{
	struct child *c = &children[r->child];

	switch (r->kind) {
	case R_REGISTERED:
		c->registered_at = r->t_ns;
		break;
	case R_IDLE:
		c->idle = 1;
		c->idle_since = r->t_ns;
		break;
	case R_WOKEN:
		c->idle = 0;
		c->woken++;
		/* The report can arrive after the next connection started (a slow
		 * pipe read): the wake-up belongs to the newest connection that had
		 * started when the child woke, never to a later one. */
		while (current >= 0 && conns[current].t_connect_start > r->t_ns)
			current--;
		if (current >= 0) {
			struct conn *cn = &conns[current];

			add_unique(cn->woken, &cn->n_woken, r->child);
			if (isnan(cn->wake_child_us[r->child]))
				cn->wake_child_us[r->child] = (r->t_ns - cn->t_connect_start) / 1e3;
			if (cn->n_woken == 1)
				cn->wake_us = (r->t_ns - cn->t_connect_end) / 1e3;
		}
		break;
	case R_EAGAIN:
		c->eagain++;
		if (current >= 0)
			add_unique(conns[current].eagain, &conns[current].n_eagain, r->child);
		break;
	case R_ACCEPTED:
		c->accepted++;
		/* eventfd: one write is outstanding at a time, so it is the newest one. */
		for (int i = opt.eventfd_trigger ? current : 0; i >= 0 && i <= current; i++) {
			if (!opt.eventfd_trigger && conns[i].client_port != r->value)
				continue;
			if (conns[i].winners++ == 0) {
				conns[i].winner = r->child;
				conns[i].accept_us = (r->t_ns - conns[i].t_connect_end) / 1e3;
			}
			return;
		}
		fail("child %d accepted a connection from port %d that the parent did not make",
		     r->child, r->value);
	case R_ERROR:
		fail("child %d failed: %s", r->child, strerror(r->value));
	default:
		fail("child %d sent an unknown report %d", r->child, r->kind);
	}
}

static int open_listener(int port)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		fail("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((unsigned short)port);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (port)
			bad_arg("--port %d: bind 127.0.0.1:%d: %s", port, port, strerror(errno));
		fail("bind 127.0.0.1:0: %s", strerror(errno));
	}
	if (listen(fd, 128) < 0)
		fail("listen: %s", strerror(errno));
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		fail("getsockname: %s", strerror(errno));
	return fd;
}

/* Where pid is now, by /proc/PID/syscall, which names the call only for a
 * task that is off its CPU, blocked in it ("running" otherwise, preempted
 * ones too): IN_EPOLL asleep in epoll_wait (on the epoll's wait queue),
 * BLOCKED_ELSEWHERE asleep in another call (a --busy-ms sleep, a write of a
 * report), RUNNING on a CPU or waiting for one, or UNKNOWN when /proc cannot
 * say (no such file, or no permission). */
enum where_now { UNKNOWN = -1, RUNNING = 0, IN_EPOLL = 1, BLOCKED_ELSEWHERE = 2 };

static enum where_now where_now(pid_t pid)
{
	char path[64], buf[128];
	long nr;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return UNKNOWN;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return UNKNOWN;
	}
	fclose(f);
	if (sscanf(buf, "%ld", &nr) != 1)
		return RUNNING;
	if (nr == SYS_epoll_wait || nr == SYS_epoll_pwait
#ifdef SYS_epoll_pwait2
	    || nr == SYS_epoll_pwait2
#endif
	)
		return IN_EPOLL;
	return BLOCKED_ELSEWHERE;
}

/* The exclusive rule: the first child in registration order that is idle, or -1. */
static int rule_winner(void)
{
	if (opt.no_exclusive)
		return -1;
	for (int i = 0; i < n_children; i++)
		if (children[opt.order[i]].idle)
			return opt.order[i];
	return -1;
}

/* Connection (or event) k's record, started just before it is made: no
 * winner yet, no wake-up seen, the children idle now and the one the rule
 * predicts. */
static struct conn *conn_begin(int k)
{
	struct conn *c = &conns[k];

	memset(c, 0, sizeof(*c));
	c->winner = -1;
	c->client_fd = -1;
	c->client_port = -1;
	for (int i = 0; i < n_children; i++)
		c->wake_child_us[i] = NAN;
	for (int i = 0; i < n_children; i++)
		if (children[i].idle)
			c->idle[c->n_idle++] = i;
	c->predicted = rule_winner();
	return c;
}

/* --trigger eventfd: a "connection" is one write to the counter. */
static void make_event(int efd, int k)
{
	struct conn *c = conn_begin(k);
	uint64_t one = 1;

	c->t_connect_start = now_ns();
	if (write(efd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		fail("write eventfd: %s", strerror(errno));
	c->t_connect_end = now_ns();
	c->connect_us = (c->t_connect_end - c->t_connect_start) / 1e3;
}

/* Latency probe: waits until every child idle at the write has reported its
 * wake-up, resets the counter (no edge for EPOLLIN waiters), waits out the gap. */
static void probe_wakeups(int report_fd, int efd, int k, int64_t deadline)
{
	struct conn *c = &conns[k];
	int64_t give_up = c->t_connect_start + REPLY_TIMEOUT_MS * 1000000LL;
	struct report r;
	uint64_t v;

	for (;;) {
		int missing = 0;

		for (int i = 0; i < c->n_idle; i++)
			missing += isnan(c->wake_child_us[c->idle[i]]);
		if (!missing)
			break;
		if (!read_report(report_fd, &r, give_up))
			fail("write %d: %d idle child(ren) did not wake within %d ms", k + 1, missing,
			     REPLY_TIMEOUT_MS);
		apply_report(&r, k);
	}
	if (read(efd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		fail("resetting the eventfd: %s", strerror(errno));
	while (read_report(report_fd, &r, deadline))
		apply_report(&r, k);
}

static int make_connection(int port, int k)
{
	struct sockaddr_in sa, local;
	socklen_t len = sizeof(local);
	struct conn *c;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		fail("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((unsigned short)port);
	c = conn_begin(k);
	/* On loopback the handshake, and the wake-up it causes, run inside connect(). */
	c->t_connect_start = now_ns();
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		fail("connect 127.0.0.1:%d: %s", port, strerror(errno));
	c->t_connect_end = now_ns();
	c->connect_us = (c->t_connect_end - c->t_connect_start) / 1e3;
	if (getsockname(fd, (struct sockaddr *)&local, &len) < 0)
		fail("getsockname: %s", strerror(errno));
	c->client_fd = fd;
	c->client_port = ntohs(local.sin_port);
	return fd;
}

static const char *rule_text(void)
{
	if (latency_probe)
		return "none: a latency probe";
	return opt.no_exclusive ? "none: the race" : "first-registered idle waiter wins";
}

/* 1 the connection obeyed the rule, 0 it did not, -1 nothing to check (no
 * idle child, or --no-exclusive: the race has no rule to check). */
static int conn_matches(const struct conn *c)
{
	if (opt.no_exclusive || c->predicted < 0)
		return -1;
	return c->winner == c->predicted;
}

static void print_set(const int *set, int n, const char *none)
{
	if (n == 0)
		printf("%s", none);
	for (int i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", set[i]);
}

static void print_json_set(const int *set, int n)
{
	printf("[");
	for (int i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", set[i]);
	printf("]");
}

static void print_connection(int k)
{
	struct conn *c = &conns[k];
	int match = conn_matches(c);
	const char *verdict = match < 0 ? "no idle child" : match ? "ok" : "MISMATCH";

	if (opt.json) {
		printf("{\"type\":\"connection\",\"connection\":%d,\"idle\":", k + 1);
		print_json_set(c->idle, c->n_idle);
		printf(",\"woken\":");
		print_json_set(c->woken, c->n_woken);
		printf(",\"eagain\":");
		print_json_set(c->eagain, c->n_eagain);
		printf(",\"winner\":%d,\"winners\":%d,", c->winner, c->winners);
		if (c->predicted < 0)
			printf("\"predicted\":null,");
		else
			printf("\"predicted\":%d,", c->predicted);
		printf("\"match\":%s,", match < 0 ? "null" : match ? "true" : "false");
		printf("\"connect_us\":%.1f,", c->connect_us);
		if (c->n_woken)
			printf("\"wake_after_connect_us\":%.1f,", c->wake_us);
		else
			printf("\"wake_after_connect_us\":null,");
		if (c->winner >= 0)
			printf("\"accept_after_connect_us\":%.1f,", c->accept_us);
		else
			printf("\"accept_after_connect_us\":null,");
		/* The accept4() call itself: from the winner's wake-up to its accept's return. */
		if (c->winner >= 0 && !isnan(c->wake_child_us[c->winner]))
			printf("\"accept_call_us\":%.1f,", c->accept_us + c->connect_us - c->wake_child_us[c->winner]);
		else
			printf("\"accept_call_us\":null,");
		printf("\"wake_us\":[");
		for (int i = 0; i < n_children; i++) {
			if (isnan(c->wake_child_us[i]))
				printf("%snull", i ? "," : "");
			else
				printf("%s%.1f", i ? "," : "", c->wake_child_us[i]);
		}
		printf("]}\n");
		return;
	}
	printf("conn %3d: idle ", k + 1);
	print_set(c->idle, c->n_idle, "-");
	printf("  woken ");
	print_set(c->woken, c->n_woken, "-");
	if (c->n_eagain) {
		printf(" (EAGAIN ");
		print_set(c->eagain, c->n_eagain, "");
		printf(")");
	}
	if (latency_probe)
		printf("  first after %.1f µs", c->wake_us);
	else if (c->winner < 0)
		printf("  accepted by nobody");
	else
		printf("  accepted by %d", c->winner);
	if (latency_probe)
		printf("  (latency probe)\n");
	else if (opt.no_exclusive)
		printf("  (race)\n");
	else if (c->predicted >= 0)
		printf("  rule %d  %s\n", c->predicted, verdict);
	else
		printf("  rule -  %s\n", verdict);
}

static int cmp_desc(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x < y) - (x > y);
}

int main(int argc, char **argv)
{
	int report_pipe[2], listener, port, checked = 0, matched = 0, bad = 0;
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	struct report r;
	long sorted[MAX_PROCESSES];
	char split[1024];
	size_t slen = 0;

	parse_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (opt.eventfd_trigger) {
		listener = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (listener < 0)
			fail("eventfd: %s", strerror(errno));
		port = 0;
	} else {
		listener = open_listener(opt.port);
		getsockname(listener, (struct sockaddr *)&sa, &len);
		port = ntohs(sa.sin_port);
	}
	if (pipe2(report_pipe, O_CLOEXEC) < 0)
		fail("pipe: %s", strerror(errno));

	/* Fork every child; none registers until told to. */
	for (int i = 0; i < opt.processes; i++) {
		int go[2];
		pid_t pid;

		children[i].go_fd = -1;
		if (pipe2(go, O_CLOEXEC) < 0)
			fail("pipe: %s", strerror(errno));
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			fail("fork: %s", strerror(errno));
		if (pid == 0) {
			close(go[1]);
			close(report_pipe[0]);
			for (int j = 0; j < i; j++)
				close(children[j].go_fd);
			child_main(i, listener, go[0], report_pipe[1]);
		}
		close(go[0]);
		children[i].pid = pid;
		children[i].go_fd = go[1];
		n_children = i + 1;
	}
	close(report_pipe[1]);

	/* Registration, one child at a time, in --order. */
	for (int i = 0; i < n_children; i++) {
		int who = opt.order[i];

		if (write(children[who].go_fd, "g", 1) != 1)
			fail("telling child %d to register: %s", who, strerror(errno));
		for (;;) {
			if (!read_report(report_pipe[0], &r, now_ns() + REPLY_TIMEOUT_MS * 1000000LL))
				fail("child %d did not register within %d ms", who, REPLY_TIMEOUT_MS);
			apply_report(&r, -1);
			if (r.kind == R_REGISTERED) {
				if (r.child != who)
					fail("child %d registered out of turn (expected %d)", r.child, who);
				break;
			}
		}
	}
	if (opt.json) {
		printf("{\"type\":\"registration\",\"order\":");
		print_json_set(opt.order, n_children);
		printf(",\"pids\":[");
		for (int i = 0; i < n_children; i++)
			printf("%s%d", i ? "," : "", (int)children[opt.order[i]].pid);
		printf("],\"registered_us\":[");
		for (int i = 0; i < n_children; i++)
			printf("%s%.1f", i ? "," : "",
			       (children[opt.order[i]].registered_at - children[opt.order[0]].registered_at) / 1e3);
		printf("],\"port\":%d,\"gap_ms\":%d,\"busy_ms\":%d,\"exclusive\":%s,\"trigger\":\"%s\"}\n", port,
		       opt.gap_ms, opt.busy_ms, opt.no_exclusive ? "false" : "true",
		       opt.eventfd_trigger ? "eventfd" : "tcp");
	} else {
		if (opt.eventfd_trigger)
			printf(PROG ": %d processes, %s on one eventfd, %d writes %d ms apart, busy %d ms "
			       "after each read\n", n_children, opt.no_exclusive ? "EPOLLIN" : "EPOLLIN|EPOLLEXCLUSIVE",
			       opt.connections, opt.gap_ms, opt.busy_ms);
		else
			printf(PROG ": %d processes, %s on 127.0.0.1:%d, %d connections %d ms "
			       "apart, busy %d ms after each accept\n", n_children,
			       opt.no_exclusive ? "EPOLLIN" : "EPOLLIN|EPOLLEXCLUSIVE", port, opt.connections,
			       opt.gap_ms, opt.busy_ms);
		printf("registration order: ");
		print_set(opt.order, n_children, "");
		printf("  (pids");
		for (int i = 0; i < n_children; i++)
			printf(" %d", (int)children[opt.order[i]].pid);
		printf(")\n");
	}

	/* Connections, one every gap; reports in between are applied as they come. */
	for (int k = 0; k < opt.connections; k++) {
		int64_t deadline, settle;

		/* Before connecting: every child that said "idle" must have said it a while ago. */
		for (;;) {
			settle = 0;
			for (int i = 0; i < n_children; i++)
				if (children[i].idle && children[i].idle_since + IDLE_SETTLE_MS * 1000000LL > settle)
					settle = children[i].idle_since + IDLE_SETTLE_MS * 1000000LL;
			if (settle <= now_ns())
				break;
			if (read_report(report_pipe[0], &r, settle))
				apply_report(&r, k - 1);
		}
		/* ... and no child may be between states: each asleep, in epoll_wait
		 * exactly when its last report said "idle" (a report is sent just
		 * before the call, so a child preempted in between is not on the wait
		 * queue yet, and one asleep there may have its report still in the
		 * pipe), or in another call. A child on a CPU or waiting for one
		 * could enter epoll_wait while the connection arrives and take it
		 * without being woken; on a busy machine that window is long, so the
		 * connection waits until every child has settled. */
		for (int64_t give_up = now_ns() + ASLEEP_WAIT_MS * 1000000LL;;) {
			int unsettled = 0;

			for (int i = 0; i < n_children; i++) {
				enum where_now w = where_now(children[i].pid);
				if (w == RUNNING || (w == IN_EPOLL) != !!children[i].idle)
					unsettled += w != UNKNOWN;
			}
			if (!unsettled)
				break;
			if (now_ns() > give_up)
				fail("connection %d: %d child(ren) not settled (asleep in epoll_wait as their "
				     "reports say, or in another call) after %d ms", k + 1, unsettled, ASLEEP_WAIT_MS);
			if (read_report(report_pipe[0], &r, now_ns() + 200000LL))
				apply_report(&r, k - 1);
		}
		if (opt.eventfd_trigger)
			make_event(listener, k);
		else
			make_connection(port, k);
		deadline = conns[k].t_connect_start + (int64_t)opt.gap_ms * 1000000LL;
		if (latency_probe) {
			probe_wakeups(report_pipe[0], listener, k, deadline);
			continue;
		}
		/* Wait out the gap, and in any case until somebody accepted this one. */
		for (;;) {
			int64_t until = deadline;

			if (conns[k].winners == 0 && until < conns[k].t_connect_start + REPLY_TIMEOUT_MS * 1000000LL)
				until = conns[k].t_connect_start + REPLY_TIMEOUT_MS * 1000000LL;
			if (conns[k].winners > 0 && now_ns() >= deadline)
				break;
			if (!read_report(report_pipe[0], &r, conns[k].winners > 0 ? deadline : until)) {
				if (conns[k].winners == 0)
					fail("connection %d was not accepted within %d ms", k + 1, REPLY_TIMEOUT_MS);
				break;
			}
			apply_report(&r, k);
		}
	}
	/* A last look for stray wakes (EAGAIN) after the final connection. */
	while (read_report(report_pipe[0], &r, now_ns() + LATE_WAKE_MS * 1000000LL))
		apply_report(&r, opt.connections - 1);
	stop_children();
	for (int k = 0; k < opt.connections; k++)
		if (conns[k].client_fd >= 0)
			close(conns[k].client_fd);
	close(listener);

	for (int k = 0; k < opt.connections; k++) {
		print_connection(k);
		if (conns[k].winners != 1 && !latency_probe)
			bad++;
		if (conn_matches(&conns[k]) >= 0) {
			checked++;
			matched += conn_matches(&conns[k]);
		}
	}
	for (int i = 0; i < n_children; i++)
		sorted[i] = children[i].accepted;
	qsort(sorted, (size_t)n_children, sizeof(long), cmp_desc);
	split[0] = '\0';
	for (int i = 0; i < n_children && slen < sizeof(split); i++)
		slen += (size_t)snprintf(split + slen, sizeof(split) - slen, "%s%ld", i ? "/" : "", sorted[i]);

	if (opt.json) {
		printf("{\"type\":\"summary\",\"processes\":%d,\"connections\":%d,\"gap_ms\":%d,\"busy_ms\":%d,"
		       "\"trigger\":\"%s\",\"order\":", n_children, opt.connections, opt.gap_ms, opt.busy_ms,
		       opt.eventfd_trigger ? "eventfd" : "tcp");
		print_json_set(opt.order, n_children);
		printf(",\"woken\":[");
		for (int i = 0; i < n_children; i++)
			printf("%s%ld", i ? "," : "", children[i].woken);
		printf("],\"accepted\":[");
		for (int i = 0; i < n_children; i++)
			printf("%s%ld", i ? "," : "", children[i].accepted);
		printf("],\"eagain\":[");
		for (int i = 0; i < n_children; i++)
			printf("%s%ld", i ? "," : "", children[i].eagain);
		printf("],\"split\":\"%s\",\"exclusive\":%s,\"rule\":\"%s\",\"checked\":%d,"
		       "\"matched\":%d,\"rule_holds\":%s,\"not_accepted_once\":%d}\n", split,
		       opt.no_exclusive ? "false" : "true", rule_text(), checked, matched,
		       opt.no_exclusive ? "null" : checked == matched ? "true" : "false", bad);
	} else {
		printf("per child (index: woken/accepted/EAGAIN):");
		for (int i = 0; i < n_children; i++)
			printf("  %d: %ld/%ld/%ld", i, children[i].woken, children[i].accepted, children[i].eagain);
		if (latency_probe)
			printf("\nlatency probe: no accepts, no rule to check\n");
		else if (opt.no_exclusive)
			printf("\nsplit %s (the race; no rule to check)\n", split);
		else
			printf("\nsplit %s; rule \"%s\": %d of %d connections matched%s\n", split,
			       rule_text(), matched, checked, checked == matched ? "" : "  (DOES NOT HOLD)");
	}
	if (bad) {
		fprintf(stderr, PROG ": %d connection(s) not accepted by exactly one child\n", bad);
		return 1;
	}
	return 0;
}
