/* acceptlab_trace.c: bin/acceptlab-trace, the loader of acceptlab_trace.bpf.c.
 * Traces the workers of a server (ours or anyone's) and says, per worker
 * thread, how often it was woken, how many accepts it won and lost, how many
 * wakeups it wasted, on which CPUs it accepted and was woken from, and how
 * long it took from its wakeup to reach accept(). With --timeline it also
 * tells, connection by connection, the story of each accept.
 *
 * Lifecycle as libbpf-tools: options -> find the targets -> open -> set
 * rodata -> load -> fill the maps -> attach -> poll until Ctrl-C, SIGTERM or
 * --duration -> print -> one cleanup. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "acceptlab_trace.h"
#include "acceptlab_trace.skel.h"

#define PROG "acceptlab-trace"
#include "../common/cli.h"
#define MAX_INODES 4096
#define MAX_EVENTS (1 << 21)

static struct env {
	int pids[TRACE_MAX_TARGETS];
	int npids;
	int pgid;
	int port;
	double duration_s;
	int json;
	int timeline;
	int verbose;
} env;

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " (--pids LIST | --pgid PGID | --port P) [--duration S] [--json]\n"
		"                       [--timeline] [--verbose]\n"
		"\n"
		"Traces the worker processes or threads of a server with eBPF (tracepoints only)\n"
		"and says why each worker won: per worker thread, times woken while blocked in\n"
		"epoll_wait or accept, accepts won and lost (EAGAIN), wasted wakeups (woken, lost\n"
		"an accept, won none before waiting again), epoll returns with nothing accepted,\n"
		"the CPU of each won accept, the waker's CPU, the CPU each won connection became\n"
		"ESTABLISHED on, and a log2 histogram of wakeup -> accept() latency.\n"
		"\n"
		"Targets (one of):\n"
		"  --pids LIST     these processes (comma-separated pids), all their threads\n"
		"  --pgid PGID     every process in this process group (a server started with\n"
		"                  its own session: its pid); processes they fork are followed\n"
		"  --port P        the processes listening on TCP port P, any server\n"
		"\n"
		"Options:\n"
		"  --duration S    stop after S seconds (default: at Ctrl-C or SIGTERM)\n"
		"  --json          one JSON object per line: an \"attached\" line once tracing,\n"
		"                  then on exit one \"worker\" line per thread and a \"summary\"\n"
		"  --timeline      also record each connection's story (for low-rate shapes):\n"
		"                  when and on which CPU it became ESTABLISHED, which workers were\n"
		"                  woken and on which CPU each ran next, whether the client was\n"
		"                  preempted by a worker, who won and who got EAGAIN\n"
		"  --verbose       libbpf's debug output\n"
		"  --help          this text\n"
		"\n"
		"Needs root (CAP_BPF, CAP_PERFMON) and tracefs (mounted at /sys/kernel/tracing\n"
		"if it is not). Exit: 0 done, 1 runtime failure, 2 usage error or cannot trace.\n"
		"\n"
		"Examples:\n"
		"  " PROG " --port 8080 --duration 10\n"
		"  " PROG " --pgid 4321 --json --timeline\n");
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !env.verbose)
		return 0;
	if (level == LIBBPF_INFO && !env.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* ---- finding the targets ---- */

static int is_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static int add_pid(int pid)
{
	for (int i = 0; i < env.npids; i++)
		if (env.pids[i] == pid)
			return 0;
	if (env.npids == TRACE_MAX_TARGETS)
		return -1;
	env.pids[env.npids++] = pid;
	return 0;
}

static void pids_of_pgid(int pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		die(2, "/proc: %s", strerror(errno));
	while ((de = readdir(d))) {
		char path[300], buf[512], *p;
		int pgrp = -1;
		FILE *f;

		if (!is_digits(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
		    sscanf(p + 1, " %*c %*d %d", &pgrp) == 1 && pgrp == pgid)
			add_pid(atoi(de->d_name));
		fclose(f);
	}
	closedir(d);
}

/* Inodes of TCP sockets in LISTEN (state 0A); port > 0 keeps only that
 * local port. Also records each listener's port in ports[] by inode. */
static int listen_inodes(int port, unsigned long *inodes, int *iports, int max)
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
			inodes[n] = inode;
			iports[n] = (int)lport;
			n++;
		}
		fclose(f);
	}
	return n;
}

/* For each process: if it holds one of the inodes, calls found(pid, port). */
static void scan_fds(const unsigned long *inodes, const int *iports, int n, int only_targets,
		     void (*found)(int pid, int port))
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		die(2, "/proc: %s", strerror(errno));
	while ((de = readdir(d))) {
		char path[64];
		struct dirent *fe;
		DIR *fd_dir;
		int pid;

		if (!is_digits(de->d_name))
			continue;
		pid = atoi(de->d_name);
		if (only_targets) {
			int t = 0;
			for (int i = 0; i < env.npids; i++)
				t |= env.pids[i] == pid;
			if (!t)
				continue;
		}
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		if (!(fd_dir = opendir(path)))
			continue;
		while ((fe = readdir(fd_dir))) {
			char link[300], target[64];
			unsigned long inode;
			ssize_t len;

			snprintf(link, sizeof(link), "/proc/%d/fd/%s", pid, fe->d_name);
			len = readlink(link, target, sizeof(target) - 1);
			if (len <= 0)
				continue;
			target[len] = '\0';
			if (sscanf(target, "socket:[%lu]", &inode) != 1)
				continue;
			for (int i = 0; i < n; i++)
				if (inodes[i] == inode)
					found(pid, iports[i]);
		}
		closedir(fd_dir);
	}
	closedir(d);
}

static int ports[TRACE_MAX_PORTS], nports;

static void add_port(int port)
{
	for (int i = 0; i < nports; i++)
		if (ports[i] == port)
			return;
	if (nports < TRACE_MAX_PORTS)
		ports[nports++] = port;
}

static void found_listener(int pid, int port)
{
	add_pid(pid);
	add_port(port);
}

static void found_port(int pid, int port)
{
	(void)pid;
	add_port(port);
}

static void find_targets(void)
{
	static unsigned long inodes[MAX_INODES];
	static int iports[MAX_INODES];
	int n;

	if (env.pgid) {
		pids_of_pgid(env.pgid);
		if (!env.npids)
			die(2, "--pgid %d: no process in that process group", env.pgid);
	}
	if (env.port) {
		n = listen_inodes(env.port, inodes, iports, MAX_INODES);
		scan_fds(inodes, iports, n, 0, found_listener);
		if (!env.npids)
			die(2, "--port %d: no process listens on TCP port %d", env.port, env.port);
		return;
	}
	for (int i = 0; i < env.npids; i++) {
		char path[64];
		struct stat st;
		snprintf(path, sizeof(path), "/proc/%d", env.pids[i]);
		if (stat(path, &st) < 0)
			die(2, "--pids: no process %d", env.pids[i]);
	}
	/* The ports those processes listen on: their connections' ESTABLISHED. */
	n = listen_inodes(0, inodes, iports, MAX_INODES);
	scan_fds(inodes, iports, n, 1, found_port);
}

/* libbpf attaches syscall tracepoints through tracefs: mount it if missing. */
static void ensure_tracefs(void)
{
	struct stat st;

	if (stat("/sys/kernel/tracing/events/syscalls", &st) == 0 ||
	    stat("/sys/kernel/debug/tracing/events/syscalls", &st) == 0)
		return;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) < 0)
		die(2, "tracefs is not mounted and mounting it at /sys/kernel/tracing failed (%s); "
		     "mount it: mount -t tracefs tracefs /sys/kernel/tracing", strerror(errno));
	if (stat("/sys/kernel/tracing/events/syscalls", &st) < 0)
		die(2, "tracefs has no syscall tracepoints (events/syscalls): this kernel lacks "
		     "CONFIG_FTRACE_SYSCALLS");
	fprintf(stderr, PROG ": mounted tracefs at /sys/kernel/tracing\n");
}

/* ---- the timeline ---- */

static struct accept_event *events;
static size_t nevents;
static unsigned long lost_events;

static int on_event(void *ctx, void *data, size_t len)
{
	(void)ctx;
	if (len < sizeof(struct accept_event))
		return 0;
	if (nevents == MAX_EVENTS) {
		lost_events++;
		return 0;
	}
	memcpy(&events[nevents++], data, sizeof(struct accept_event));
	return 0;
}

static int cmp_event(const void *a, const void *b)
{
	const struct accept_event *x = a, *y = b;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

#define MAX_WOKEN 64

/* One line per connection: from its ESTABLISHED to the accept that took it. */
static void print_timeline(void)
{
	uint64_t t0 = 0;
	int nconn = 0;

	qsort(events, nevents, sizeof(events[0]), cmp_event);
	if (!env.json)
		printf("\ntimeline (us from the first connection; cpu in brackets)\n");
	for (size_t i = 0; i < nevents; i++) {
		const struct accept_event *est = &events[i];
		const struct accept_event *win = NULL;
		struct { uint32_t tid, waker_cpu, ran_cpu, preempted; uint64_t wake_ns, ran_ns; char replaced[16]; } woken[MAX_WOKEN];
		uint32_t eagain[MAX_WOKEN];
		int nwoken = 0, neagain = 0, client_preempted = 0;
		size_t j;

		if (est->kind != EV_ESTABLISHED)
			continue;
		if (!t0)
			t0 = est->ts_ns;
		for (j = i + 1; j < nevents; j++) {
			const struct accept_event *e = &events[j];

			if (e->kind == EV_ACCEPT && e->sk == est->sk && e->ret >= 0) {
				win = e;
				break;
			}
			if (e->kind == EV_WAKE && nwoken < MAX_WOKEN) {
				woken[nwoken].tid = e->tid;
				woken[nwoken].waker_cpu = e->cpu;
				woken[nwoken].wake_ns = e->ts_ns;
				woken[nwoken].ran_ns = 0;
				woken[nwoken].ran_cpu = UINT32_MAX;
				woken[nwoken].preempted = 0;
				woken[nwoken].replaced[0] = '\0';
				nwoken++;
			} else if (e->kind == EV_SWITCH_IN) {
				for (int k = 0; k < nwoken; k++) {
					if (woken[k].tid != e->tid || woken[k].ran_ns)
						continue;
					woken[k].ran_ns = e->ts_ns;
					woken[k].ran_cpu = e->cpu;
					/* Still runnable (state 0) when switched out: preempted. */
					woken[k].preempted = e->preempt && e->prev_state == 0;
					memcpy(woken[k].replaced, e->comm, sizeof(woken[k].replaced));
					if (woken[k].preempted && e->prev_pid == est->tid)
						client_preempted = 1;
				}
			} else if (e->kind == EV_ACCEPT && e->ret == -11 && neagain < MAX_WOKEN) {
				eagain[neagain++] = e->tid;
			}
		}
		nconn++;
		if (env.json) {
			printf("{\"type\":\"conn\",\"n\":%d,\"t_us\":%.1f,\"est_cpu\":%u,\"client\":\"%s\","
			       "\"client_tid\":%u,\"rport\":%u,\"woken\":[",
			       nconn, (est->ts_ns - t0) / 1e3, est->cpu, est->comm, est->tid, est->rport);
			for (int k = 0; k < nwoken; k++) {
				printf("%s{\"tid\":%u,\"waker_cpu\":%u,\"after_us\":%.1f", k ? "," : "", woken[k].tid,
				       woken[k].waker_cpu, (woken[k].wake_ns - est->ts_ns) / 1e3);
				if (woken[k].ran_ns)
					printf(",\"ran_cpu\":%u,\"ran_after_us\":%.1f,\"replaced\":\"%s\",\"preempted\":%s",
					       woken[k].ran_cpu, (woken[k].ran_ns - est->ts_ns) / 1e3, woken[k].replaced,
					       woken[k].preempted ? "true" : "false");
				printf("}");
			}
			printf("],\"client_preempted\":%s,", client_preempted ? "true" : "false");
			if (win)
				printf("\"winner\":%u,\"winner_cpu\":%u,\"accept_after_us\":%.1f,", win->tid, win->cpu,
				       (win->ts_ns - est->ts_ns) / 1e3);
			else
				printf("\"winner\":null,");
			printf("\"eagain\":[");
			for (int k = 0; k < neagain; k++)
				printf("%s%u", k ? "," : "", eagain[k]);
			printf("]}\n");
		} else {
			printf("conn %3d  t=%9.1f  established [%u] by %s", nconn, (est->ts_ns - t0) / 1e3, est->cpu,
			       est->comm);
			for (int k = 0; k < nwoken; k++) {
				printf("; woke %u from [%u] +%.0f", woken[k].tid, woken[k].waker_cpu,
				       (woken[k].wake_ns - est->ts_ns) / 1e3);
				if (woken[k].ran_ns)
					printf(" ran [%u] +%.0f%s%s", woken[k].ran_cpu,
					       (woken[k].ran_ns - est->ts_ns) / 1e3,
					       woken[k].preempted ? " preempting " : "",
					       woken[k].preempted ? woken[k].replaced : "");
			}
			if (win)
				printf("; won by %u [%u] +%.0f", win->tid, win->cpu, (win->ts_ns - est->ts_ns) / 1e3);
			else
				printf("; not accepted while traced");
			for (int k = 0; k < neagain; k++)
				printf("%s%u", k ? "," : "; EAGAIN ", eagain[k]);
			printf("%s\n", client_preempted ? "  (client preempted by a worker)" : "");
		}
	}
	if (lost_events)
		fprintf(stderr, PROG ": %lu timeline events dropped (over %d)\n", lost_events, MAX_EVENTS);
}

/* ---- the per-worker table ---- */

/* The log2 bucket holding the median: [lo, hi) us, or -1 when empty. */
static int median_slot(const struct worker_stats *s)
{
	uint64_t total = 0, seen = 0;

	for (int k = 0; k < TRACE_HIST_SLOTS; k++)
		total += s->wake_to_accept[k];
	if (!total)
		return -1;
	for (int k = 0; k < TRACE_HIST_SLOTS; k++) {
		seen += s->wake_to_accept[k];
		if (seen * 2 >= total)
			return k;
	}
	return TRACE_HIST_SLOTS - 1;
}

static unsigned long slot_lo(int k)
{
	return k == 0 ? 0 : 1ul << k;
}

static void json_cpus(const char *name, const __u64 *v)
{
	int first = 1;

	printf(",\"%s\":{", name);
	for (int c = 0; c < TRACE_MAX_CPUS; c++) {
		if (!v[c])
			continue;
		printf("%s\"%d\":%llu", first ? "" : ",", c, (unsigned long long)v[c]);
		first = 0;
	}
	printf("}");
}

static void text_cpus(const __u64 *v, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int c = 0; c < TRACE_MAX_CPUS && off < len; c++)
		if (v[c])
			off += (size_t)snprintf(buf + off, len - off, "%s%d:%llu", off ? " " : "", c,
						(unsigned long long)v[c]);
	if (!off)
		snprintf(buf, len, "-");
}

struct row {
	__u32 tid;
	struct worker_stats s;
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->s.tgid != y->s.tgid)
		return x->s.tgid < y->s.tgid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int print_stats(int map_fd, double elapsed_s)
{
	static struct row rows[4096];
	__u32 key, next, *prev = NULL;
	unsigned long long won = 0, lost = 0, wakeups = 0, wasted = 0;
	int n = 0;

	while (bpf_map_get_next_key(map_fd, prev, &next) == 0 && n < 4096) {
		if (bpf_map_lookup_elem(map_fd, &next, &rows[n].s) == 0) {
			rows[n].tid = next;
			if (rows[n].s.wakeups || rows[n].s.won || rows[n].s.lost || rows[n].s.wait_returns)
				n++;
		}
		key = next;
		prev = &key;
	}
	qsort(rows, (size_t)n, sizeof(rows[0]), cmp_row);
	if (!env.json)
		printf("%-8s %-8s %7s %6s %6s %6s %7s %7s  %-14s %-14s %-14s %s\n", "pid", "tid", "woken", "won",
		       "lost", "wasted", "returns", "empty", "accept cpu", "waker cpu", "est cpu",
		       "wake->accept p50");
	for (int i = 0; i < n; i++) {
		const struct worker_stats *s = &rows[i].s;
		int m = median_slot(s);

		won += s->won;
		lost += s->lost;
		wakeups += s->wakeups;
		wasted += s->wasted;
		if (env.json) {
			int first = 1;
			printf("{\"type\":\"worker\",\"pid\":%u,\"tid\":%u,\"wakeups\":%llu,\"won\":%llu,\"lost\":%llu,"
			       "\"wasted\":%llu,\"wait_returns\":%llu,\"empty_returns\":%llu,\"established\":%llu",
			       s->tgid, rows[i].tid, (unsigned long long)s->wakeups, (unsigned long long)s->won,
			       (unsigned long long)s->lost, (unsigned long long)s->wasted,
			       (unsigned long long)s->wait_returns, (unsigned long long)s->empty_returns,
			       (unsigned long long)s->established);
			json_cpus("accept_cpu", s->accept_cpu);
			json_cpus("waker_cpu", s->waker_cpu);
			json_cpus("est_cpu", s->est_cpu);
			printf(",\"wake_to_accept_us_log2\":{");
			for (int k = 0; k < TRACE_HIST_SLOTS; k++) {
				if (!s->wake_to_accept[k])
					continue;
				printf("%s\"%d\":%llu", first ? "" : ",", k, (unsigned long long)s->wake_to_accept[k]);
				first = 0;
			}
			printf("}");
			if (m >= 0)
				printf(",\"wake_to_accept_p50_us\":[%lu,%lu]}\n", slot_lo(m), 1ul << (m + 1));
			else
				printf(",\"wake_to_accept_p50_us\":null}\n");
		} else {
			char acc[64], wak[64], est[64], p50[32];
			text_cpus(s->accept_cpu, acc, sizeof(acc));
			text_cpus(s->waker_cpu, wak, sizeof(wak));
			text_cpus(s->est_cpu, est, sizeof(est));
			if (m >= 0)
				snprintf(p50, sizeof(p50), "%lu-%lu us", slot_lo(m), 1ul << (m + 1));
			else
				snprintf(p50, sizeof(p50), "-");
			printf("%-8u %-8u %7llu %6llu %6llu %6llu %7llu %7llu  %-14s %-14s %-14s %s\n", s->tgid,
			       rows[i].tid, (unsigned long long)s->wakeups, (unsigned long long)s->won,
			       (unsigned long long)s->lost, (unsigned long long)s->wasted,
			       (unsigned long long)s->wait_returns, (unsigned long long)s->empty_returns, acc, wak,
			       est, p50);
		}
	}
	if (env.json)
		printf("{\"type\":\"summary\",\"duration_s\":%.3f,\"workers\":%d,\"wakeups\":%llu,\"won\":%llu,"
		       "\"lost\":%llu,\"wasted\":%llu}\n", elapsed_s, n, wakeups, won, lost, wasted);
	else
		printf("%d worker threads over %.1f s: %llu wakeups (%llu wasted), %llu accepts won, %llu lost\n", n,
		       elapsed_s, wakeups, wasted, won, lost);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pids", required_argument, NULL, 'p' },
		{ "pgid", required_argument, NULL, 'g' },
		{ "port", required_argument, NULL, 'P' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeline", no_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct acceptlab_trace_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	int c, err = 0, ntargets = 0;
	double start, deadline;
	const char *pids_arg = NULL;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'p': pids_arg = optarg; ntargets++; break;
		case 'g': env.pgid = (int)parse_long("--pgid", optarg, 1, INT_MAX); ntargets++; break;
		case 'P': env.port = (int)parse_long("--port", optarg, 1, 65535); ntargets++; break;
		case 'd': {
			char *end;
			env.duration_s = strtod(optarg, &end);
			if (!*optarg || *end || !(env.duration_s > 0) || env.duration_s > 86400)
				die(2, "--duration %s: expected seconds in (0, 86400] (see --help)", optarg);
			break;
		}
		case 'j': env.json = 1; break;
		case 't': env.timeline = 1; break;
		case 'v': env.verbose = 1; break;
		case 'h': usage(stdout); return 0;
		case ':': die(2, "%s: needs a value (see --help)", argv[optind - 1]);
		default: die(2, "%s: unknown option (see --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		die(2, "%s: unexpected argument (see --help)", argv[optind]);
	if (ntargets != 1)
		die(2, "%s: give exactly one of --pids, --pgid, --port (see --help)",
		     ntargets ? "--pids/--pgid/--port" : "targets");
	if (pids_arg) {
		char *copy = strdup(pids_arg), *tok, *save = NULL;
		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (add_pid((int)parse_long("--pids", tok, 1, INT_MAX)) < 0)
				die(2, "--pids: more than %d processes", TRACE_MAX_TARGETS);
		free(copy);
		if (!env.npids)
			die(2, "--pids %s: no pid given", pids_arg);
	}
	if (geteuid() != 0)
		die(2, "needs root (CAP_BPF and CAP_PERFMON) to load its tracing programs; run it as root");
	find_targets();
	ensure_tracefs();

	libbpf_set_print(libbpf_print);
	skel = acceptlab_trace_bpf__open();
	if (!skel) {
		fprintf(stderr, PROG ": opening the BPF object: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->targ_timeline = env.timeline;
	if (!env.timeline)
		bpf_program__set_autoload(skel->progs.on_switch, false);
	err = acceptlab_trace_bpf__load(skel);
	if (err) {
		fprintf(stderr, PROG ": loading the BPF programs: %s%s\n", strerror(-err),
			-err == EPERM ? " (needs CAP_BPF and CAP_PERFMON)" : "");
		err = -err == EPERM ? 2 : 1;
		goto cleanup;
	}
	for (int i = 0; i < env.npids; i++) {
		__u32 tgid = (__u32)env.pids[i];
		__u8 one = 1;
		bpf_map__update_elem(skel->maps.targets, &tgid, sizeof(tgid), &one, sizeof(one), BPF_ANY);
	}
	for (int i = 0; i < nports; i++) {
		__u16 p = (__u16)ports[i];
		__u8 one = 1;
		bpf_map__update_elem(skel->maps.ports, &p, sizeof(p), &one, sizeof(one), BPF_ANY);
	}
	err = acceptlab_trace_bpf__attach(skel);
	if (err) {
		fprintf(stderr, PROG ": attaching: %s\n", strerror(-err));
		err = 1;
		goto cleanup;
	}
	if (env.timeline) {
		events = calloc(MAX_EVENTS, sizeof(*events));
		rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, NULL, NULL);
		if (!events || !rb) {
			fprintf(stderr, PROG ": ring buffer: %s\n", strerror(errno));
			err = 1;
			goto cleanup;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	if (env.json) {
		printf("{\"type\":\"attached\",\"pids\":[");
		for (int i = 0; i < env.npids; i++)
			printf("%s%d", i ? "," : "", env.pids[i]);
		printf("],\"ports\":[");
		for (int i = 0; i < nports; i++)
			printf("%s%d", i ? "," : "", ports[i]);
		printf("],\"timeline\":%s}\n", env.timeline ? "true" : "false");
		fflush(stdout);
	} else {
		fprintf(stderr, PROG ": tracing %d process(es) (", env.npids);
		for (int i = 0; i < env.npids && i < 16; i++)
			fprintf(stderr, "%s%d", i ? " " : "", env.pids[i]);
		fprintf(stderr, "%s), port(s)", env.npids > 16 ? " ..." : "");
		for (int i = 0; i < nports; i++)
			fprintf(stderr, " %d", ports[i]);
		fprintf(stderr, "%s; %s\n", nports ? "" : " none found",
			env.duration_s > 0 ? "stops after --duration" : "Ctrl-C to stop");
	}

	start = now_s();
	deadline = env.duration_s > 0 ? start + env.duration_s : 0;
	while (!exiting && (!deadline || now_s() < deadline)) {
		if (rb) {
			int n = ring_buffer__poll(rb, 100);
			if (n < 0 && n != -EINTR) {
				fprintf(stderr, PROG ": ring buffer poll: %s\n", strerror(-n));
				err = 1;
				break;
			}
		} else {
			usleep(100000);
		}
	}
	if (rb)
		ring_buffer__consume(rb);
	print_stats(bpf_map__fd(skel->maps.stats), now_s() - start);
	if (env.timeline)
		print_timeline();
	fflush(stdout);

cleanup:
	ring_buffer__free(rb);
	acceptlab_trace_bpf__destroy(skel);
	free(events);
	return err;
}
