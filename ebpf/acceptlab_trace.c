/* acceptlab_trace.c: bin/acceptlab-trace, the loader of acceptlab_trace.bpf.c.
 * Traces the workers of a server (ours or anyone's) and says, per worker
 * thread, how often it was woken, how many accepts it won and lost, how many
 * wakeups it wasted, on which CPUs it accepted and was woken from, and how
 * long it took from its wakeup to reach accept(). With --timeline it also
 * tells, connection by connection, the story of each accept.
 *
 * Lifecycle as libbpf-tools: options -> find the targets (targets.c) ->
 * open -> set rodata -> load -> fill the maps -> attach -> poll until
 * Ctrl-C, SIGTERM or --duration -> print (trace_print.c) -> one cleanup. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "acceptlab_trace.h"
#include "acceptlab_trace.skel.h"
#include "detach.h"
#include "slots.h"
#include "targets.h"
#include "tracefs.h"
#include "waits.h"
#include "trace_print.h"

#define PROG "acceptlab-trace"
#include "../common/cli.h"
#define MAX_EVENTS (1 << 21)

/* The BPF maps the targets fill hold as many as targets.c finds. */
_Static_assert(TARGETS_MAX_PIDS == TRACE_MAX_TARGETS && TARGETS_MAX_PORTS == TRACE_MAX_PORTS,
	       "targets.h and acceptlab_trace.h disagree on the number of targets");

static struct env {
	int pgid;
	int port;
	double duration_s;
	int json;
	int timeline;
	int verbose;
} env;

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
		"the CPU of each won accept, the waker's CPU, a log2 histogram of wakeup ->\n"
		"accept() latency, and with --timeline the CPU each won connection became\n"
		"ESTABLISHED on.\n"
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
		"                  preempted by a worker, who won and who got EAGAIN; the\n"
		"                  worker lines gain established and est_cpu. It traces every\n"
		"                  TCP state change on the machine, so it costs more\n"
		"  --verbose       libbpf's debug output\n"
		"  --help          this text\n"
		"\n"
		"SIGUSR1 pauses the trace (its programs detached: nothing counted, nothing\n"
		"added to any syscall), SIGUSR2 resumes it; with --json each is acknowledged\n"
		"by a \"paused\" or \"resumed\" line once done.\n"
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

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

/* The processes to trace and the ports they listen on, from --pids (already
 * in t), --pgid or --port; a target that is not there is exit 2. */
static void find_targets(struct targets *t)
{
	char err[TARGETS_ERR_LEN];
	int missing;

	if (env.pgid) {
		if (targets_add_pgid(t, env.pgid, err, sizeof(err)) < 0)
			die(2, "%s", err);
		if (!t->npids)
			die(2, "--pgid %d: no process in that process group", env.pgid);
	}
	if (env.port) {
		if (targets_add_listeners(t, env.port, err, sizeof(err)) < 0)
			die(2, "%s", err);
		if (!t->npids)
			die(2, "--port %d: no process listens on TCP port %d", env.port, env.port);
		return;
	}
	if ((missing = targets_first_missing(t)))
		die(2, "--pids: no process %d", missing);
	/* The ports those processes listen on: their connections' ESTABLISHED. */
	if (targets_add_listening_ports(t, err, sizeof(err)) < 0)
		die(2, "%s", err);
}

/* libbpf attaches syscall tracepoints through tracefs: mount it if missing. */
static void ensure_tracefs(void)
{
	char err[256];
	int mounted;

	if (tracefs_ensure(&mounted, err, sizeof(err)) < 0)
		die(2, "%s", err);
	if (mounted)
		fprintf(stderr, PROG ": mounted tracefs at /sys/kernel/tracing\n");
}

/* --timeline: the ring buffer's events, kept for trace_print_timeline. */
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

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* SIGUSR1 pauses the trace (every program detached: nothing is counted,
 * nothing runs on the machine's syscalls), SIGUSR2 resumes it. */
static volatile sig_atomic_t want_paused;

static void on_pause(int sig)
{
	want_paused = sig == SIGUSR1;
}

/* Takes the trace's programs off (paused) or puts them back; says so on
 * stdout with --json once done, so a caller can time what it measures. */
static int set_paused(struct acceptlab_trace_bpf *skel, int paused)
{
	struct bpf_object_skeleton *skels[] = { skel->skeleton };
	int err = 0;

	if (paused)
		links_destroy_together(skels, 1);
	else if ((err = acceptlab_trace_bpf__attach(skel)))
		fprintf(stderr, PROG ": attaching again: %s\n", strerror(-err));
	if (env.json && !err) {
		printf("{\"type\":\"%s\",\"t\":%.6f}\n", paused ? "paused" : "resumed", now_s());
		fflush(stdout);
	}
	return err;
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
	static struct targets targets;
	struct acceptlab_trace_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	int c, err = 0, ntargets = 0, paused = 0;
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
			if (targets_add_pid(&targets, (int)parse_long("--pids", tok, 1, INT_MAX)) < 0)
				die(2, "--pids: more than %d processes", TARGETS_MAX_PIDS);
		free(copy);
		if (!targets.npids)
			die(2, "--pids %s: no pid given", pids_arg);
	}
	if (geteuid() != 0)
		die(2, "needs root (CAP_BPF and CAP_PERFMON) to load its tracing programs; run it as root");
	find_targets(&targets);
	ensure_tracefs();

	libbpf_set_print(libbpf_print);
	skel = acceptlab_trace_bpf__open();
	if (!skel) {
		fprintf(stderr, PROG ": opening the BPF object: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->targ_timeline = env.timeline;
	{
		/* The traced threads' and processes' arrays shrunk by a test (slots.h). */
		__u32 n = slots_test_shrink(skel->maps.worker_slots, skel->maps.target_slots);

		if (n)
			skel->rodata->targ_worker_slots = skel->rodata->targ_target_slots = n;
	}
	/* A wakeup counts in epoll's waits and the accepts (waits.h). */
	waits_fill((long *)skel->rodata->targ_wait_nr, 0);
	if (!env.timeline) {
		bpf_program__set_autoload(skel->progs.on_switch, false);
		bpf_program__set_autoload(skel->progs.on_set_state, false);
	}
	err = acceptlab_trace_bpf__load(skel);
	if (err) {
		fprintf(stderr, PROG ": loading the BPF programs: %s%s\n", strerror(-err),
			-err == EPERM ? " (needs CAP_BPF and CAP_PERFMON)" : "");
		err = -err == EPERM ? 2 : 1;
		goto cleanup;
	}
	/* Each process at its place, or in the hash where another holds it
	 * (nothing runs yet: no program races these). */
	for (int i = 0; i < targets.npids; i++)
		slots_place(bpf_map__fd(skel->maps.target_slots), bpf_map__fd(skel->maps.targets),
			    skel->rodata->targ_target_slots, (__u32)targets.pids[i]);
	for (int i = 0; i < targets.nports; i++) {
		__u16 p = (__u16)targets.ports[i];
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
	signal(SIGUSR1, on_pause);
	signal(SIGUSR2, on_pause);

	if (env.json) {
		printf("{\"type\":\"attached\",\"pids\":[");
		for (int i = 0; i < targets.npids; i++)
			printf("%s%d", i ? "," : "", targets.pids[i]);
		printf("],\"ports\":[");
		for (int i = 0; i < targets.nports; i++)
			printf("%s%d", i ? "," : "", targets.ports[i]);
		printf("],\"timeline\":%s}\n", env.timeline ? "true" : "false");
		fflush(stdout);
	} else {
		fprintf(stderr, PROG ": tracing %d process(es) (", targets.npids);
		for (int i = 0; i < targets.npids && i < 16; i++)
			fprintf(stderr, "%s%d", i ? " " : "", targets.pids[i]);
		fprintf(stderr, "%s), port(s)", targets.npids > 16 ? " ..." : "");
		for (int i = 0; i < targets.nports; i++)
			fprintf(stderr, " %d", targets.ports[i]);
		fprintf(stderr, "%s; %s\n", targets.nports ? "" : " none found",
			env.duration_s > 0 ? "stops after --duration" : "Ctrl-C to stop");
	}

	start = now_s();
	deadline = env.duration_s > 0 ? start + env.duration_s : 0;
	while (!exiting && (!deadline || now_s() < deadline)) {
		if (want_paused != paused) {
			paused = want_paused;
			if (set_paused(skel, paused)) {
				err = 1;
				break;
			}
		}
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
	trace_print_workers(bpf_map__fd(skel->maps.worker_slots), skel->rodata->targ_worker_slots,
			    bpf_map__fd(skel->maps.workers), now_s() - start, env.json, env.timeline);
	if (env.timeline) {
		trace_print_timeline(events, nevents, env.json);
		if (lost_events)
			fprintf(stderr, PROG ": %lu timeline events dropped (over %d)\n", lost_events, MAX_EVENTS);
	}
	fflush(stdout);

cleanup:
	ring_buffer__free(rb);
	if (skel)
		links_destroy_together(&skel->skeleton, 1);
	acceptlab_trace_bpf__destroy(skel);
	free(events);
	return err;
}
