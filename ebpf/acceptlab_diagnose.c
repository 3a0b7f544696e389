/* acceptlab_diagnose.c: bin/acceptlab-diagnose. For any running server, by
 * its port and unchanged: how it shares the port (detect.c, selector.c),
 * and, traced (root), which worker thread accepts and which serves each
 * connection, with its wakeups and wasted wakeups, as the kernel attributes
 * them (acceptlab_diagnose.bpf.c).
 * Passive (--duration) it watches live traffic; active (--load) it runs
 * bin/acceptlab-probe at the listener's loopback address. It never asks the
 * server who served.
 *
 * Lifecycle as libbpf-tools: options -> detect -> open -> set rodata ->
 * load -> fill the maps -> attach -> watch (sampling held counts; the probe
 * when active) until the load ends, --duration, Ctrl-C or the server
 * exits -> read the maps -> classify (diagnosis.c) -> print
 * (diagnose_print.c) -> one cleanup. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "acceptlab_diagnose.h"
#include "advice.h"
#include "acceptlab_diagnose.skel.h"
#include "detach.h"
#include "detect.h"
#include "diagnose_print.h"
#include "diagnosis.h"
#include "selector.h"
#include "slots.h"
#include "targets.h"
#include "tracefs.h"
#include "waits.h"

#define PROG "acceptlab-diagnose"
#include "../common/cli.h"

#define DEFAULT_DURATION_S 10.0
#define SAMPLE_MS 200         /* held counts sampled this often */
#define REG_SAMPLE_MS 50      /* the holders' epolls read again this often (registration churn), */
#define REG_READ_SPACING 100  /* or, for a large one, 100 times as long as its last read took */
#define PROGRESS_S 3.0        /* a progress line on stderr this often */
#define ALIVE_CHECK_S 0.5     /* is the server still there? */
#define ROUND_GAP_MS "200"  /* --rounds: the probe's pause between rounds, while a round's counts are marked */
#define ROUND_SETTLE_MS 120 /* at a round's end: at most this long for its last accepts */
#define SETTLE_MS 1500        /* after the load: at most this long for the last accepts and reads */
#define WAIT_SAMPLES 5        /* looks at each holder thread's syscall */
#define WAIT_GAP_MS 20

/* Test switch: the probe's --worker-from in active mode (default none), so
 * a test can have the probe read the worker id our server answers and
 * compare it with the kernel's attribution. Unset in normal use. */
#define PROBE_WORKER_FROM_ENV "ACCEPTLAB_TEST_PROBE_WORKER_FROM"
/* Test switch: the entries of the followed connections' array (default
 * DIAG_CONN_SLOTS), so a test can make connections share an entry and
 * follow the ones that find it taken in the hash beside it. */
#define CONN_SLOTS_ENV "ACCEPTLAB_TEST_DIAG_SLOTS"
/* Measurement switch: every hook attached with a program that returns at
 * once, so the trace_overhead study can measure what the hooks alone cost
 * the server (its passive-hooks runs). Nothing is counted; the JSON
 * "attached" line says "hooks_only". */
#define HOOKS_ONLY_ENV "ACCEPTLAB_TEST_DIAG_HOOKS_ONLY"

static struct env {
	int port;
	int pid;
	const char *load;       /* burst | ramp | keepalive, or NULL: passive */
	int connections;
	int rounds;             /* --rounds: the probe's rounds, each split on its own (0: the probe's one) */
	const char *request;
	int tcp;
	double duration_s;
	int json;
	int verbose;
	int hooks_only;         /* HOOKS_ONLY_ENV is "1" */
} env = { .request = "/" };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " --port P [--pid PID] [--duration S] [--json]\n"
		"       " PROG " --port P [--pid PID] --load burst|ramp|keepalive [--connections N]\n"
		"                          [--rounds R] [--request PATH | --tcp] [--json]\n"
		"\n"
		"Says, for any server running on this machine, found by its port and left\n"
		"unchanged, which worker (process and thread) gets each connection, by which\n"
		"mechanism, and why. The mechanism is read without touching the server: the\n"
		"sockets listening on the port (one shared, or a SO_REUSEPORT group, and whether\n"
		"a BPF program steers the group), the processes and threads holding them, and\n"
		"how each waits (its epoll's registration: EPOLLEXCLUSIVE, edge or level\n"
		"triggered; or blocked in accept()). Traced with eBPF (root), the kernel says\n"
		"which thread accepted each connection and which first read its bytes (they\n"
		"differ when connections are handed off), how many each held at once, its\n"
		"wakeups (each time it is woken asleep in epoll, poll, select or accept) and\n"
		"wasted wakeups (after which an accept got EAGAIN and none a connection before\n"
		"its next wakeup), and who adds and deletes the listener in an epoll\n"
		"(an accept mutex, nginx's re-add). The server is never asked who served.\n"
		"The split is set against a fair random one (the exact chance it is as\n"
		"skewed), and \"What to change\" says what acceptlab's measured run found\n"
		"for the same mechanism and its alternatives at that worker count, and the\n"
		"settings that change it in known servers, from the file $" ADVICE_ENV "\n"
		"names, else ../share/acceptlab/advice.tsv (installed) or\n"
		"../report/advice.tsv (a clone), relative to the executable's directory.\n"
		"\n"
		"  --port P        the server's TCP port (required)\n"
		"  --pid PID       only this process and its descendants, when several servers\n"
		"                  hold the port\n"
		"  --duration S    passive: watch live traffic for S seconds and send nothing\n"
		"                  (the default, for %.0f s); a progress line on stderr every few s\n"
		"  --load SHAPE    active: run acceptlab-probe's SHAPE (burst, ramp, keepalive) at\n"
		"                  the listener's loopback address and watch while it runs\n"
		"  --connections N the probe's connections (its default otherwise)\n"
		"  --rounds R      the probe runs R rounds (at most %d), each split on its own\n"
		"                  (\"rounds\" in --json) beside the split of them all\n"
		"  --request PATH  the probe's request: GET PATH (default /)\n"
		"  --tcp           connect and hold, send nothing (servers that do not speak HTTP;\n"
		"                  burst or ramp; nothing is read, so the split is of accepts)\n"
		"  --json          JSON lines: \"detected\", \"attached\", the probe's lines as \"probe\",\n"
		"                  and last \"diagnosis\"\n"
		"  --verbose       libbpf's debug output\n"
		"  --help          this text\n"
		"\n"
		"Passive, SIGUSR1 pauses the watch (the trace's programs detached, nothing\n"
		"read) and SIGUSR2 resumes it; with --json each is acknowledged by a \"paused\"\n"
		"or \"resumed\" line, and the diagnosis's paused_s says how long it was paused.\n"
		"\n"
		"Without root it says what it cannot do (the trace, the BPF selector's\n"
		"iterator) and reports the listeners, holders and epoll registrations it can\n"
		"read. Exit: 0 done; 1 the watch ended early (the server exited: a partial\n"
		"result) or a runtime failure; 2 usage error, nothing listening on the port,\n"
		"or (--load) a listener not reachable on loopback.\n"
		"\n"
		"Examples:\n"
		"  " PROG " --port 8080 --duration 30\n"
		"  " PROG " --port 8080 --load burst --connections 64 --json\n",
		DEFAULT_DURATION_S, DIAG_MAX_ROUNDS);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN && !env.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

/* Passive: SIGUSR1 pauses the watch (the trace's programs detached, the
 * holders' epolls and the threads' counts not read), SIGUSR2 resumes it. */
static volatile sig_atomic_t want_paused;

static void on_pause(int sig)
{
	want_paused = sig == SIGUSR1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void parse_options(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'P' },
		{ "pid", required_argument, NULL, 'p' },
		{ "load", required_argument, NULL, 'l' },
		{ "connections", required_argument, NULL, 'c' },
		{ "rounds", required_argument, NULL, 'R' },
		{ "request", required_argument, NULL, 'r' },
		{ "tcp", no_argument, NULL, 't' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, request_given = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'P': env.port = (int)parse_long("--port", optarg, 1, 65535); break;
		case 'p': env.pid = (int)parse_long("--pid", optarg, 1, INT_MAX); break;
		case 'l':
			if (strcmp(optarg, "burst") && strcmp(optarg, "ramp") && strcmp(optarg, "keepalive"))
				bad_arg("--load %s: expected burst, ramp or keepalive", optarg);
			env.load = optarg;
			break;
		case 'c': env.connections = (int)parse_long("--connections", optarg, 1, 100000); break;
		case 'R': env.rounds = (int)parse_long("--rounds", optarg, 1, DIAG_MAX_ROUNDS); break;
		case 'r':
			if (optarg[0] != '/')
				bad_arg("--request %s: expected a path starting with /", optarg);
			env.request = optarg;
			request_given = 1;
			break;
		case 't': env.tcp = 1; break;
		case 'd': {
			char *end;
			env.duration_s = strtod(optarg, &end);
			if (!*optarg || *end || !(env.duration_s > 0) || env.duration_s > 86400)
				bad_arg("--duration %s: expected seconds in (0, 86400]", optarg);
			break;
		}
		case 'j': env.json = 1; break;
		case 'v': env.verbose = 1; break;
		case 'h': usage(stdout); exit(0);
		case ':': bad_arg("%s: needs a value", argv[optind - 1]);
		default: bad_arg("%s: unknown option", argv[optind - 1]);
		}
	}
	{
		const char *v = getenv(HOOKS_ONLY_ENV);

		env.hooks_only = v && !strcmp(v, "1");
	}
	if (optind < argc)
		bad_arg("%s: unexpected argument", argv[optind]);
	if (!env.port)
		bad_arg("--port: required");
	if (!env.load && (env.connections || env.rounds || request_given || env.tcp))
		bad_arg("%s: only with --load", env.connections ? "--connections" : env.rounds ? "--rounds" :
						request_given ? "--request" : "--tcp");
	if (env.tcp && request_given)
		bad_arg("--tcp: not with --request (--tcp sends nothing)");
	if (env.tcp && env.load && !strcmp(env.load, "keepalive"))
		bad_arg("--tcp: not with --load keepalive (keepalive asks requests; burst or ramp)");
	if (env.load && env.duration_s > 0)
		bad_arg("--duration: a passive watch's length; with --load the watch lasts as long as the load");
	if (!env.load && !(env.duration_s > 0))
		env.duration_s = DEFAULT_DURATION_S;
}

/* ---- the probe (active mode) ---- */

struct probe_run {
	pid_t pid;
	int out;                /* its stdout (JSON lines) */
	char buf[65536];
	size_t len;
	int status;
	int done;
	int rounds_ended;       /* the probe's round lines read so far */
};

/* The directory this program's executable is in. */
static void exe_dir(char *out, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	char *slash;

	if (n <= 0)
		die(1, "/proc/self/exe: %s", strerror(errno));
	out[n] = '\0';
	slash = strrchr(out, '/');
	if (slash)
		*slash = '\0';
}

/* acceptlab-probe beside this program. */
static void probe_path(char *out, size_t len)
{
	char self[PATH_MAX - 32];

	exe_dir(self, sizeof(self));
	snprintf(out, len, "%s/acceptlab-probe", self);
}

static void probe_start(struct probe_run *p, const char *target)
{
	char probe[PATH_MAX], conns[16], rounds[16];
	const char *argv[24];
	const char *worker_from = getenv(PROBE_WORKER_FROM_ENV);
	int fds[2], n = 0;

	probe_path(probe, sizeof(probe));
	if (access(probe, X_OK) < 0)
		die(1, "%s: %s (acceptlab-probe is looked for beside " PROG ")", probe, strerror(errno));
	argv[n++] = probe;
	argv[n++] = "--target";
	argv[n++] = target;
	argv[n++] = "--shape";
	argv[n++] = env.load;
	argv[n++] = "--json";
	if (env.connections) {
		snprintf(conns, sizeof(conns), "%d", env.connections);
		argv[n++] = "--connections";
		argv[n++] = conns;
	}
	if (env.rounds) {
		snprintf(rounds, sizeof(rounds), "%d", env.rounds);
		argv[n++] = "--rounds";
		argv[n++] = rounds;
		/* Room to mark one round's counts before the next begins. */
		argv[n++] = "--round-gap-ms";
		argv[n++] = ROUND_GAP_MS;
	}
	if (env.tcp) {
		argv[n++] = "--tcp";
	} else {
		argv[n++] = "--path";
		argv[n++] = env.request;
		/* Attribution is the kernel's: the probe reads no worker id
		 * (a test switch makes it read one, to compare). */
		argv[n++] = "--worker-from";
		argv[n++] = worker_from && *worker_from ? worker_from : "none";
	}
	argv[n] = NULL;
	if (pipe2(fds, O_CLOEXEC) < 0)
		die(1, "pipe: %s", strerror(errno));
	fflush(stdout);
	p->pid = fork();
	if (p->pid < 0)
		die(1, "fork: %s", strerror(errno));
	if (p->pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		setpgid(0, 0);
		dup2(devnull, 0);
		dup2(fds[1], 1);
		execv(probe, (char *const *)argv);
		fprintf(stderr, PROG ": exec %s: %s\n", probe, strerror(errno));
		_exit(127);
	}
	setpgid(p->pid, p->pid); /* as the child does: either wins, so a kill of the group reaches it */
	close(fds[1]);
	p->out = fds[0];
	fcntl(p->out, F_SETFL, O_NONBLOCK);
}

/* Reads what the probe printed; each whole line goes out as a "probe" line
 * (--json) and is otherwise dropped (its human lines are on stderr). */
static void probe_pump(struct probe_run *p, int timeout_ms)
{
	struct pollfd pfd = { .fd = p->out, .events = POLLIN };
	ssize_t n;
	char *nl;

	if (p->out < 0) {
		if (timeout_ms > 0)
			usleep((useconds_t)timeout_ms * 1000);
		return;
	}
	if (poll(&pfd, 1, timeout_ms) <= 0)
		return;
	n = read(p->out, p->buf + p->len, sizeof(p->buf) - 1 - p->len);
	if (n <= 0) {
		if (n == 0 || errno != EAGAIN) {
			close(p->out);
			p->out = -1;
		}
		return;
	}
	p->len += (size_t)n;
	while ((nl = memchr(p->buf, '\n', p->len))) {
		*nl = '\0';
		if (env.json && p->buf[0] == '{')
			printf("{\"kind\":\"probe\",\"line\":%s}\n", p->buf);
		if (p->buf[0] == '{' && strstr(p->buf, "\"type\":\"round\""))
			p->rounds_ended++;
		p->len -= (size_t)(nl + 1 - p->buf);
		memmove(p->buf, nl + 1, p->len);
	}
	if (p->len == sizeof(p->buf) - 1)
		p->len = 0; /* an overlong line: dropped */
	fflush(stdout);
}

static int probe_reap(struct probe_run *p)
{
	if (p->done || p->pid <= 0)
		return 1;
	if (waitpid(p->pid, &p->status, WNOHANG) == p->pid)
		p->done = 1;
	return p->done;
}

static void probe_kill(struct probe_run *p)
{
	if (p->pid > 0 && !p->done) {
		kill(-p->pid, SIGKILL);
		waitpid(p->pid, &p->status, 0);
		p->done = 1;
	}
	if (p->out >= 0)
		close(p->out);
	p->out = -1;
}

/* The loopback address the probe can reach the port at (IPv4: the probe
 * speaks IPv4), or exit 2 saying why there is none. */
static void loopback_target(const struct detection *d, char *out, size_t len)
{
	const char *why = NULL;

	for (int i = 0; i < d->nl; i++) {
		const struct detect_listener *l = &d->l[i];

		if (l->family == AF_INET && (!strcmp(l->addr, "0.0.0.0") || !strncmp(l->addr, "127.", 4))) {
			snprintf(out, len, "%s:%d", strcmp(l->addr, "0.0.0.0") ? l->addr : "127.0.0.1", d->port);
			return;
		}
		if (l->family == AF_INET6 && !strcmp(l->addr, "::") && !l->v6only) {
			snprintf(out, len, "127.0.0.1:%d", d->port); /* dual-stack: IPv4 reaches it */
			return;
		}
		if (l->family == AF_INET6 && (!strcmp(l->addr, "::1") || !strcmp(l->addr, "::")))
			why = "it listens on IPv6 only and the probe speaks IPv4";
	}
	die(2, "--load: port %d is not reachable on loopback (%s%s)", d->port,
	    why ? why : "it listens on ", why ? "" : d->l[0].addr);
}

/* ---- the trace ---- */

struct tracing {
	struct acceptlab_diagnose_bpf *diag;
	const struct detection *d;
	long queued0;        /* the listeners' accept queues when the trace attached */
};

/* Loads and attaches the object. 0, or -1 with err set (*denied when the
 * kernel refused for want of privilege); *no_recv when this kernel has no
 * sock_recv_length tracepoint (served cannot be counted). */
static int trace_start(struct tracing *tr, const struct detection *d, int *denied, int *no_recv, char *err,
		       size_t errlen)
{
	struct stat st;
	int rc, mounted;

	*denied = *no_recv = 0;
	if (tracefs_ensure(&mounted, err, errlen) < 0)
		return -1;
	libbpf_set_print(libbpf_print);
	if (!(tr->diag = acceptlab_diagnose_bpf__open())) {
		snprintf(err, errlen, "opening the BPF object: %s", strerror(errno));
		return -1;
	}
	/* sock_recv_length is Linux 6.3's: without it, nothing is served.
	 * Asked of tracefs, not of the kernel's BTF (a second parse of it). */
	if (!tracefs_has_event("sock", "sock_recv_length")) {
		bpf_program__set_autoload(tr->diag->progs.on_recv, false);
		*no_recv = 1;
	}
	{
		const char *v = getenv(CONN_SLOTS_ENV);
		long n = v ? strtol(v, NULL, 10) : 0;

		if (n > 0 && n <= DIAG_CONN_SLOTS) {
			bpf_map__set_max_entries(tr->diag->maps.conn_slots, (__u32)n);
			tr->diag->rodata->targ_conn_slots = (__u32)n;
		}
	}
	{
		/* The traced threads' and processes' arrays shrunk by a test (slots.h). */
		__u32 n = slots_test_shrink(tr->diag->maps.thread_slots, tr->diag->maps.target_slots);

		if (n)
			tr->diag->rodata->targ_thread_slots = tr->diag->rodata->targ_target_slots = n;
	}
	tr->diag->rodata->targ_port = (__u16)d->port;
	tr->diag->rodata->targ_hooks_only = env.hooks_only;
	if (stat("/proc/self/ns/net", &st) == 0)
		tr->diag->rodata->targ_netns = (__u32)st.st_ino;
	/* A wakeup counts in any wait a server may sleep in for a
	 * connection: the epolls, the accepts, poll and select. */
	waits_fill((long *)tr->diag->rodata->targ_wait_nr, 1);
	if ((rc = acceptlab_diagnose_bpf__load(tr->diag))) {
		*denied = rc == -EPERM || rc == -EACCES;
		snprintf(err, errlen, "loading the diagnosis's BPF programs: %s", strerror(-rc));
		return -1;
	}
	/* Each holder at its place in target_slots, or in the hash where
	 * another holds it (nothing runs yet: no program races these). */
	for (int i = 0; i < d->nh; i++)
		slots_place(bpf_map__fd(tr->diag->maps.target_slots), bpf_map__fd(tr->diag->maps.targets),
			    tr->diag->rodata->targ_target_slots, (__u32)d->h[i].pid);
	if ((rc = acceptlab_diagnose_bpf__attach(tr->diag))) {
		snprintf(err, errlen, "attaching: %s", strerror(-rc));
		return -1;
	}
	tr->d = d;
	tr->queued0 = detect_queued(d);
	return 0;
}

/* Takes the trace's programs off (paused) or puts them back; with --json
 * says so once done ("paused" or "resumed" with the loader's clock), so a
 * caller can time what it measures. 0, or -1 when it could not attach
 * again. */
static int trace_pause(struct tracing *tr, int paused)
{
	struct bpf_object_skeleton *skels[] = { tr->diag->skeleton };
	int rc = 0;

	if (paused)
		links_destroy_together(skels, 1);
	else if ((rc = acceptlab_diagnose_bpf__attach(tr->diag)))
		fprintf(stderr, PROG ": attaching again: %s\n", strerror(-rc));
	if (env.json && !rc) {
		printf("{\"kind\":\"%s\",\"t\":%.6f}\n", paused ? "paused" : "resumed", now_s());
		fflush(stdout);
	}
	return rc ? -1 : 0;
}

static void trace_stop(struct tracing *tr)
{
	struct bpf_object_skeleton *skels[] = { tr->diag ? tr->diag->skeleton : NULL };

	links_destroy_together(skels, 1);
	acceptlab_diagnose_bpf__destroy(tr->diag);
	tr->diag = NULL;
}

/* The trace's totals. The connections established while traced are
 * those accepted, plus what the listeners' accept queues gained since the
 * attach (a connection queued then and accepted since is in both; the
 * accepts alone if sock_diag cannot tell): the
 * kernel side follows no TCP state change, whose tracepoint every socket
 * on the machine would pay at each step of its handshake and its close. */
static void read_totals(const struct tracing *tr, struct diag_totals *t)
{
	__u32 zero = 0;
	long queued = tr->queued0 >= 0 ? detect_queued(tr->d) : -1;
	int ncpu = libbpf_num_possible_cpus();
	struct diag_totals *per = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*per)) : NULL;

	memset(t, 0, sizeof(*t));
	/* The kernel side keeps one copy per CPU: summed, field by field (all
	 * __u64; established is the loader's, 0 in every copy). */
	if (per && !bpf_map__lookup_elem(tr->diag->maps.totals, &zero, sizeof(zero), per,
					 (size_t)ncpu * sizeof(*per), 0))
		for (int i = 0; i < ncpu; i++)
			for (size_t k = 0; k < sizeof(*t) / sizeof(__u64); k++)
				((__u64 *)t)[k] += ((const __u64 *)&per[i])[k];
	free(per);
	t->established = t->accepted;
	if (queued >= 0 && (long long)t->accepted + queued - tr->queued0 >= 0)
		t->established = (__u64)((long long)t->accepted + queued - tr->queued0);
}

/* A row for thread tid of process pid, named (its comm, or its process's
 * when it is gone: a thread per connection) and with what detection saw
 * it wait in; NULL when the rows are full. */
static struct diag_row *new_row(struct diagnosis *g, const struct detection *d, int pid, int tid)
{
	struct diag_row *r = diagnosis_row(g, pid, tid);
	char path[96];
	FILE *f;

	if (!r || r->comm[0])
		return r;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	if (!(f = fopen(path, "r"))) {
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "r");
	}
	if (f) {
		if (fgets(r->comm, sizeof(r->comm), f))
			r->comm[strcspn(r->comm, "\n")] = '\0';
		fclose(f);
	}
	diagnosis_row_wait(r, d);
	return r;
}

/* ---- registrations, from /proc ---- */

/* The row a change in process pid's epoll epfd is credited to: the thread
 * detection saw waiting in it, else the process's main thread. */
static struct diag_row *epoll_owner(struct diagnosis *g, const struct detection *d, int pid, int epfd)
{
	for (int i = 0; i < d->nt; i++)
		if (d->t[i].pid == pid && d->t[i].fd == epfd &&
		    (d->t[i].wait == WAIT_EPOLL || d->t[i].wait == WAIT_EPOLL_WITHOUT))
			return new_row(g, d, pid, d->t[i].tid);
	return new_row(g, d, pid, pid);
}

/* Registration churn, sampled: each of the holders' epolls is read again
 * (/proc/PID/fdinfo), and a listener that appeared in it since the last look
 * counts as an add (with its events mask), one that left as a delete. A
 * change undone between two looks is not seen, so the counts are lower
 * bounds; an accept mutex under load, which moves the listener from epoll
 * to epoll at its turns, shows at once. The kernel writes an epoll's
 * fdinfo holding the epoll's lock, which the server's epoll_ctl on it
 * waits for, and in time that grows with its registrations (thousands of
 * connections: milliseconds): each epoll is read every REG_SAMPLE_MS, or
 * REG_READ_SPACING times its last read's length if that is longer, so the
 * reads hold it at most 1/REG_READ_SPACING of the time. all: every epoll,
 * due or not (the last look). */
static void sample_registrations(const struct detection *d, struct diagnosis *g, int all)
{
	for (int i = 0; i < g->nepolls; i++) {
		struct diag_epoll *e = &g->epolls[i];
		unsigned events;
		double start = now_s(), took;
		int now;
		struct diag_row *r;

		if (!all && start < e->due)
			continue;
		now = detect_epoll_listeners(d, e->pid, e->fd, &events);
		took = now_s() - start;
		if (!e->reads++ || took * 1e6 < e->shortest_us)
			e->shortest_us = took * 1e6;
		e->due = start + (took * REG_READ_SPACING > REG_SAMPLE_MS / 1000.0 ? took * REG_READ_SPACING
									   : REG_SAMPLE_MS / 1000.0);
		if (now < 0)
			continue; /* gone: its process exited, or closed it */
		if (e->present < 0 || now == e->present) {
			e->present = (signed char)now;
			continue;
		}
		e->present = (signed char)now;
		if (!(r = epoll_owner(g, d, e->pid, e->fd)))
			continue;
		if (now) {
			r->ctl_add++;
			r->ctl_events |= events;
		} else {
			r->ctl_del++;
		}
	}
}

/* The traced threads' records, thread_slots' claimed entries first, then
 * the hash's: each as tid and record, n of them (at most max). */
static int thread_records(const struct tracing *tr, __u32 *tids, struct diag_thread *recs, int max)
{
	static struct diag_thread_slot slots[DIAG_THREAD_SLOTS];
	__u32 count = slots_read(bpf_map__fd(tr->diag->maps.thread_slots), tr->diag->rodata->targ_thread_slots,
				 slots, sizeof(slots[0])), key, next, *prev = NULL;
	int fd, n = 0;

	for (__u32 i = 0; i < count && n < max; i++)
		if (slots[i].tid) {
			tids[n] = (__u32)slots[i].tid;
			recs[n++] = slots[i].t;
		}
	fd = bpf_map__fd(tr->diag->maps.threads);
	while (n < max && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &recs[n]) == 0)
			tids[n++] = key;
	}
	return n;
}

/* One look at every traced thread: its counts into its row (a thread that
 * accepted, served or holds a connection is a worker; one seen registering
 * a listener is made one by sample_registrations), and its held
 * count into the row's samples (and its process's pool's) when sample is
 * set. */
static void read_threads(const struct tracing *tr, const struct detection *d, struct diagnosis *g, int sample)
{
	static __u32 tids[DIAG_THREAD_SLOTS + DIAG_MAX_THREADS];
	static struct diag_thread recs[DIAG_THREAD_SLOTS + DIAG_MAX_THREADS];
	static struct { int pid; long long held; } pools[DIAG_MAX_ROWS];
	int npools = 0, n = thread_records(tr, tids, recs, DIAG_THREAD_SLOTS + DIAG_MAX_THREADS);

	for (int k = 0; k < n; k++) {
		const struct diag_thread t = recs[k];
		__u32 key = tids[k];
		struct diag_row *r;

		r = diagnosis_find(g, (int)key);
		if (!r && (t.accepted || t.served || t.held > 0))
			r = new_row(g, d, (int)t.tgid, (int)key);
		if (!r)
			continue;
		r->accepted = t.accepted;
		r->served = t.served;
		r->handed_off = t.handed_off;
		r->received = t.received;
		r->received_cross = t.received_cross;
		/* A cycle still open (its last wakeup, to now) counts as wasted
		 * if it is so far; only the final read's count is printed. */
		r->wakeups = t.wakeups;
		r->wasted = t.wasted + (cycle_wasted(&t) ? 1 : 0);
		if (t.held_peak > r->held_max)
			r->held_max = t.held_peak;
		if (!sample)
			continue;
		if (t.held > 0)
			r->held_sum += (double)t.held;
		if (diagnosis_is_pool(r)) {
			int k = 0;
			while (k < npools && pools[k].pid != r->pid)
				k++;
			if (k == npools && npools < DIAG_MAX_ROWS)
				pools[npools++] = (typeof(pools[0])){ r->pid, 0 };
			if (k < npools)
				pools[k].held += t.held > 0 ? t.held : 0;
		}
	}
	if (sample) {
		for (int k = 0; k < npools; k++)
			diagnosis_pool_sample(g, pools[k].pid, pools[k].held);
		g->samples++;
	}
}

/* ---- the watch ---- */

/* Each probe round's end: every thread's counts then (--rounds). */
static struct diag_mark marks[DIAG_MAX_ROUNDS];
static int nmarks;

/* Marks the counts at the end of each round the probe reported since the
 * last call. */
static void mark_rounds(struct tracing *tr, struct detection *d, struct diagnosis *g, const struct probe_run *probe)
{
	struct diag_totals t;
	double until = now_s() + ROUND_SETTLE_MS / 1000.0;

	if (!env.rounds || probe->rounds_ended <= nmarks)
		return;
	/* The round's last accepts may trail its line (a server that takes
	 * one connection at a time accepts the rest as the probe closes them):
	 * a little while for every connection established to be accepted. */
	for (read_totals(tr, &t); t.accepted < t.established && now_s() < until; read_totals(tr, &t))
		usleep(2000);
	read_threads(tr, d, g, 0);
	while (nmarks < probe->rounds_ended && nmarks < DIAG_MAX_ROUNDS)
		diagnosis_mark(g, &marks[nmarks++]);
}

/* Watches until the load ends (active) or the duration passes (passive),
 * Ctrl-C, or the server goes; samples held counts meanwhile, and marks
 * each probe round's end (--rounds). */
static void watch(struct tracing *tr, struct detection *d, struct diagnosis *g, struct probe_run *probe)
{
	double start = now_s(), next_sample = start, next_alive = start + ALIVE_CHECK_S;
	double next_progress = start + PROGRESS_S, deadline = env.load ? 0 : start + env.duration_s;
	double settle_until = 0, paused_at = 0;
	struct diag_totals last = { 0 }, t;
	int paused = 0;

	for (int i = 0; i < d->nep; i++)
		g->epolls[i] = (struct diag_epoll){ .pid = d->ep[i].pid, .fd = d->ep[i].epfd, .present = -1 };
	g->nepolls = d->nep;

	for (;;) {
		double now = now_s();

		if (exiting) {
			g->partial = 1;
			snprintf(g->partial_why, sizeof(g->partial_why), "stopped by a signal after %.1f s", now - start);
			break;
		}
		if (!env.load && want_paused != paused) {
			paused = want_paused;
			if (trace_pause(tr, paused) < 0) {
				g->partial = 1;
				snprintf(g->partial_why, sizeof(g->partial_why),
					 "could not attach again after a pause, %.1f s into the watch", now - start);
				break;
			}
			if (paused)
				paused_at = now;
			else
				g->paused_s += now - paused_at;
		}
		if (!paused && now >= next_sample) {
			read_threads(tr, d, g, 1);
			next_sample = now + SAMPLE_MS / 1000.0;
		}
		if (!paused)
			sample_registrations(d, g, 0);
		if (now >= next_alive) {
			next_alive = now + ALIVE_CHECK_S;
			if (!detect_holders_alive(d) || !detect_listening(d)) {
				g->partial = 1;
				snprintf(g->partial_why, sizeof(g->partial_why),
					 "the server stopped listening on port %d after %.1f s of the watch%s", d->port,
					 now - start, env.load ? ", before the load ended" : "");
				break;
			}
		}
		if (now >= next_progress) {
			read_totals(tr, &t);
			fprintf(stderr, PROG ": %.0f s: %llu connections established, %llu accepted, %llu served, "
				"%llu handed off\n", now - start, (unsigned long long)t.established,
				(unsigned long long)t.accepted, (unsigned long long)t.served,
				(unsigned long long)t.handoffs);
			next_progress = now + PROGRESS_S;
		}
		if (deadline && now >= deadline)
			break;
		if (env.load) {
			probe_pump(probe, 50);
			mark_rounds(tr, d, g, probe);
			if (probe_reap(probe)) {
				/* The last accepts and reads may trail the probe's end. */
				while (probe->out >= 0) {
					probe_pump(probe, 50);
					mark_rounds(tr, d, g, probe);
				}
				read_totals(tr, &t);
				if (!settle_until)
					settle_until = now + SETTLE_MS / 1000.0;
				else if ((t.accepted >= t.established && !memcmp(&t, &last, sizeof(t))) ||
					 now >= settle_until)
					break;
				last = t;
			}
		} else {
			usleep(50000);
		}
	}
	if (paused)
		g->paused_s += now_s() - paused_at;
	sample_registrations(d, g, 1);
	g->duration_s = now_s() - start;
}

int main(int argc, char **argv)
{
	static struct detection d;
	static struct diagnosis g;
	static int tree[TARGETS_MAX_PIDS];
	static struct advice adv;
	struct tracing tr = { 0 };
	struct probe_run probe = { .pid = -1, .out = -1 };
	char err[256], target[80] = "", cannot[512] = "";
	int ntree = 0, root = geteuid() == 0, denied, no_recv = 0, rc = 0;

	parse_options(argc, argv);
	if (detect_listeners(&d, env.port, err, sizeof(err)) < 0)
		die(1, "%s", err);
	if (!d.nl)
		die(2, "port %d: nothing listens on TCP port %d", env.port, env.port);
	if (env.pid && !(ntree = detect_process_tree(env.pid, tree, TARGETS_MAX_PIDS)))
		die(2, "--pid %d: no such process", env.pid);
	if (detect_holders(&d, env.pid ? tree : NULL, ntree, err, sizeof(err)) < 0)
		die(1, "%s", err);
	if (env.pid && !d.nh)
		die(2, "--pid %d: neither it nor its descendants hold a listener on port %d", env.pid, env.port);
	if (env.load)
		loopback_target(&d, target, sizeof(target));
	detect_registrations(&d);
	detect_waits(&d, WAIT_SAMPLES, WAIT_GAP_MS);
	selector_find(&d, root, &g.sel);
	if (env.json)
		diag_print_detected_json(&d, &g.sel);

	g.port = env.port;
	g.mode = env.load ? "active" : "passive";
	g.load = env.load;
	diagnosis_rows_from_detection(&g, &d);

	if (!root) {
		snprintf(cannot, sizeof(cannot),
			 "not root: no tracing (who accepts and who serves each connection, held counts, wakeups, "
			 "registration churn) and no BPF (the reuseport selector looked for only among the "
			 "holders' own program descriptors)%s; listeners, holders and epoll registrations are "
			 "read from /proc%s",
			 env.load ? ", so no load was sent" : "",
			 d.nh ? "" : " (no holder readable: another user's processes)");
	} else if (trace_start(&tr, &d, &denied, &no_recv, err, sizeof(err)) < 0) {
		if (!denied) {
			fprintf(stderr, PROG ": %s\n", err);
			rc = 1;
			goto cleanup;
		}
		snprintf(cannot, sizeof(cannot), "no tracing: %s; listeners, holders and epoll registrations are "
						 "read from /proc", err);
		trace_stop(&tr);
	} else {
		g.traced = 1;
		g.churn_every_ms = REG_SAMPLE_MS;
		g.churn_spacing = REG_READ_SPACING;
		if (no_recv)
			snprintf(cannot, sizeof(cannot), "this kernel has no sock_recv_length tracepoint (Linux 6.3): "
				 "who first read each connection cannot be traced, so the split is of accepts");
	}
	if (cannot[0])
		fprintf(stderr, PROG ": %s\n", cannot);

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGUSR1, on_pause);
	signal(SIGUSR2, on_pause);
	if (env.json) {
		printf("{\"kind\":\"attached\",\"traced\":%s,\"pids\":[", g.traced ? "true" : "false");
		for (int i = 0; i < d.nh; i++)
			printf("%s%d", i ? "," : "", d.h[i].pid);
		printf("],\"port\":%d%s}\n", env.port, g.traced && env.hooks_only ? ",\"hooks_only\":true" : "");
		fflush(stdout);
	}
	if (g.traced) {
		if (env.load) {
			fprintf(stderr, PROG ": traced; running acceptlab-probe --shape %s at %s\n", env.load, target);
			probe_start(&probe, target);
		} else {
			fprintf(stderr, PROG ": traced; watching port %d for %.0f s (Ctrl-C ends it early)%s\n", env.port,
				env.duration_s, env.hooks_only ? "; " HOOKS_ONLY_ENV ": hooks only, nothing counted" : "");
		}
		watch(&tr, &d, &g, &probe);
		probe_kill(&probe);
		read_threads(&tr, &d, &g, 0);
		{
			struct diag_totals t;
			read_totals(&tr, &t);
			g.established = t.established;
			g.accepted = t.accepted;
			g.served = t.served;
			g.handoffs = t.handoffs;
			g.closed = t.closed;
			g.unaccepted_reads = t.unaccepted_reads;
			g.spilled = t.spilled;
		}
		if (g.partial)
			rc = 1;
		if (env.rounds)
			diagnosis_rounds(&g, marks, nmarks);
	}
	diagnosis_classify(&g, &d);
	{
		char dir[PATH_MAX];

		exe_dir(dir, sizeof(dir));
		advice_find(&adv, dir, g.closest_variant, diagnosis_split_workers(&g));
	}
	if (env.json)
		diag_print_json(&g, cannot[0] ? cannot : NULL, &adv);
	else
		diag_print_text(&g, &d, cannot[0] ? cannot : NULL, &adv);
	fflush(stdout);
	advice_free(&adv);

cleanup:
	probe_kill(&probe);
	trace_stop(&tr);
	return rc;
}
