/* main.c: acceptlab-server's command line. Parses and validates every
 * argument (exit 2 with a one-line message naming the bad one), then hands
 * over to the supervisor. */
#include "server.h"
#include "handoff.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROG "acceptlab-server"
#include "../common/cli.h"
#define DEFAULT_HANDOFF_POLICY HANDOFF_OPEN

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " --variant NAME [--workers N | --threads N] [--host 127.0.0.1]\n"
		"                        [--port P]"
		" [--pin-workers CPULIST] [--idle-timeout S]\n"
		"                        [--header-timeout S]\n"
		"                        [--respawn-limit N] [--stop-grace-ms MS]\n"
		"                        [--accept-mutex-delay MS] [--accept-mutex-strict]\n"
		"                        [--worker-connections N] [--reuseport-migrate]\n"
		"                        [--shared-epoll] [--handoff-policy P]\n"
		"                        [--handoff-capacity N] [--steal-threshold N]\n"
		"                        [--spawn-workers]\n"
		"       " PROG " --list-variants\n"
		"\n"
		"Runs N workers behind one TCP port with the chosen accept variant: N worker\n"
		"processes (--workers), or N threads of one process (--threads).\n"
		"When every worker serves, prints one JSON line on stdout:\n"
		"  {\"event\":\"ready\",\"port\":P,\"variant\":...,\"mode\":\"process\"|\"threads\",\"workers\":[...]}\n"
		"then lifecycle lines (reaped, respawned, gave_up, reload, replaced, reloaded,\n"
		"reload_failed, stopping, worker_exit, stopped; fdpass and reuseport-bpf add\n"
		"slot_restarted, fdpass left and handoffs_closed).\n"
		"\n"
		"Endpoints: GET /pid (the worker's pid, its tid in threads mode; header\n"
		"X-Worker: index), GET /,\n"
		"GET /work?us=N (spin N us of CPU), GET /sleep?ms=N (block inline).\n"
		"\n"
		"Options:\n"
		"  --variant NAME        accept variant (required), one of:\n");
	for (int i = 0; accept_variants[i]; i++)
		fprintf(f, "      %-18s %s\n", accept_variants[i]->name, accept_variants[i]->mechanism);
	fprintf(f,
		"  --workers N           worker processes (default 2, at most %d)\n"
		"  --threads N           threads mode: one process, N worker threads (no respawn:\n"
		"                        a thread that fails stops the server with exit 1)\n"
		"  --host ADDR           IPv4 address to bind (default 127.0.0.1)\n"
		"  --port P              TCP port; 0 binds an ephemeral one (default 8080)\n"
		"  --pin-workers LIST    pin worker i to the i-th CPU of LIST (e.g. 0,1)\n"
		"  --idle-timeout S      close keep-alive connections idle S seconds (default 30)\n"
		"  --header-timeout S    close, without an answer, a connection whose request head\n"
		"                        is still incomplete S seconds after its first byte\n"
		"                        (a slowloris; default 10)\n"
		"  --respawn-limit N     respawns allowed per hour, all workers (default 10 x workers)\n"
		"  --stop-grace-ms MS    on SIGTERM, workers get MS to finish before SIGKILL (default 10000)\n"
		"  --accept-mutex-delay MS  mutex: how long a worker without the token waits\n"
		"                        before trying again (default 500, as nginx)\n"
		"  --accept-mutex-strict mutex: strict turns (release after one accept, pass the\n"
		"                        turn to the next worker, steal after a timeout)\n"
		"  --worker-connections N  mutex: nginx's worker_connections for the 1/8 rule\n"
		"                        (default 512)\n"
		"  --reuseport-migrate   reuseport variants: set net.ipv4.tcp_migrate_req=1 in this\n"
		"                        network namespace (refused in the initial one; run the\n"
		"                        server under unshare -n), so a dying worker's queued\n"
		"                        connections move to a sibling instead of being reset\n"
		"  --shared-epoll        bare, threads mode: every thread waits in ONE epoll\n"
		"                        instance holding the listener and all connections\n"
		"  --handoff-policy P    handoff: written (the note's rule: local load against\n"
		"                        the idlest peer's queue depth), open (against the\n"
		"                        peer's open connections plus queue), or off (plain\n"
		"                        reuseport, the knob-off arm); default %s\n"
		"  --handoff-capacity N  handoff: slots in each thread's queue (default 64)\n"
		"  --steal-threshold N   handoff: hand off when the local load exceeds the\n"
		"                        peer's by at least N (default 1)\n"
		"  --spawn-workers       process mode: start each worker by fork+exec of this binary\n"
		"                        (same arguments), inheriting the listener and the\n"
		"                        variant's shared descriptors by number (environment\n"
		"                        ACCEPTLAB_SPAWNED); a reload then runs new code\n"
		"  --list-variants       print each variant as one JSON line (name, modes, the\n"
		"                        knob options it reads, mechanism) and exit 0\n"
		"  --help                this text\n"
		"\n"
		"SIGTERM or SIGINT: workers finish in-flight requests, the server exits 0.\n"
		"SIGHUP (process mode): reload. Every worker is replaced, one at a time: the new\n"
		"one serves before the old one stops taking connections; the old one answers\n"
		"each open connection's next request with Connection: close and exits when\n"
		"none is left (idle ones are closed after 1 s). Threads mode refuses it.\n"
		"Exit: 0 stopped by signal, 1 runtime failure, 2 usage error or port in use.\n",
		MAX_WORKERS, handoff_policy_name(DEFAULT_HANDOFF_POLICY));
}

/* The variant knobs given, and for each KNOB_* bit the first option that
 * set it (to name in the error if the variant does not read it). */
struct knobs_given {
	unsigned bits;
	const char *first[KNOB_LAST + 1];
};

static void note_knob(struct knobs_given *k, unsigned bit, const char *option)
{
	k->bits |= bit;
	if (!k->first[bit])
		k->first[bit] = option;
}

/* Each KNOB_* bit and the options that set it, in --help order. */
static const struct {
	unsigned bit;
	const char *option;
} knob_options[] = {
	{ KNOB_MUTEX, "--accept-mutex-delay" },
	{ KNOB_MUTEX, "--accept-mutex-strict" },
	{ KNOB_MUTEX, "--worker-connections" },
	{ KNOB_MIGRATE, "--reuseport-migrate" },
	{ KNOB_SHARED_EPOLL, "--shared-epoll" },
	{ KNOB_HANDOFF, "--handoff-policy" },
	{ KNOB_HANDOFF, "--handoff-capacity" },
	{ KNOB_HANDOFF, "--steal-threshold" },
};

/* --list-variants: one JSON line per variant, for tools that keep their
 * own table of what to run (probes/arms.py checks itself against it). The
 * mechanism text holds no quote or backslash (checked by the arms test). */
static void list_variants(void)
{
	for (int i = 0; accept_variants[i]; i++) {
		const struct accept_variant *v = accept_variants[i];
		unsigned modes = v->modes ? v->modes : MODE_PROCESS | MODE_THREADS;
		int first = 1;

		printf("{\"variant\":\"%s\",\"modes\":[%s%s%s],\"knobs\":[", v->name,
		       modes & MODE_PROCESS ? "\"process\"" : "",
		       (modes & MODE_PROCESS) && (modes & MODE_THREADS) ? "," : "",
		       modes & MODE_THREADS ? "\"threads\"" : "");
		for (size_t k = 0; k < sizeof(knob_options) / sizeof(knob_options[0]); k++) {
			if (!(v->knobs & knob_options[k].bit))
				continue;
			printf("%s\"%s\"", first ? "" : ",", knob_options[k].option);
			first = 0;
		}
		printf("],\"mechanism\":\"%s\"}\n", v->mechanism);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "variant", required_argument, NULL, 'v' },
		{ "workers", required_argument, NULL, 'w' },
		{ "threads", required_argument, NULL, 't' },
		{ "host", required_argument, NULL, 'H' },
		{ "port", required_argument, NULL, 'p' },
		{ "pin-workers", required_argument, NULL, 'P' },
		{ "idle-timeout", required_argument, NULL, 'i' },
		{ "header-timeout", required_argument, NULL, 'e' },
		{ "respawn-limit", required_argument, NULL, 'r' },
		{ "stop-grace-ms", required_argument, NULL, 'g' },
		{ "accept-mutex-delay", required_argument, NULL, 'D' },
		{ "accept-mutex-strict", no_argument, NULL, 'X' },
		{ "worker-connections", required_argument, NULL, 'C' },
		{ "reuseport-migrate", no_argument, NULL, 'M' },
		{ "shared-epoll", no_argument, NULL, 'S' },
		{ "handoff-policy", required_argument, NULL, 'O' },
		{ "handoff-capacity", required_argument, NULL, 'Q' },
		{ "steal-threshold", required_argument, NULL, 'T' },
		{ "spawn-workers", no_argument, NULL, 'x' },
		{ "list-variants", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct server srv;
	struct knobs_given knobs = { 0, { NULL } };
	const char *variant = NULL, *pin = NULL, *workers_opt = NULL;
	int respawn_limit = -1, c;

	srv.cfg.workers = 2;
	srv.cfg.host = "127.0.0.1";
	srv.cfg.port = 8080;
	srv.cfg.idle_timeout_s = 30;
	srv.cfg.header_timeout_s = 10;
	srv.cfg.stop_grace_ms = 10000;
	srv.cfg.accept_mutex_delay_ms = 500;
	srv.cfg.worker_connections = 512;
	srv.cfg.handoff_policy = DEFAULT_HANDOFF_POLICY;
	srv.cfg.handoff_capacity = 64;
	srv.cfg.steal_threshold = 1;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'v': variant = optarg; break;
		case 'w':
		case 't':
			if (workers_opt)
				bad_arg("%s: cannot be combined with %s", c == 'w' ? "--workers" : "--threads",
					workers_opt);
			workers_opt = c == 'w' ? "--workers" : "--threads";
			srv.cfg.workers = (int)parse_long(workers_opt, optarg, 1, MAX_WORKERS);
			srv.cfg.threads = c == 't';
			break;
		case 'H': srv.cfg.host = optarg; break;
		case 'p': srv.cfg.port = (int)parse_long("--port", optarg, 0, 65535); break;
		case 'P': pin = optarg; break;
		case 'i': srv.cfg.idle_timeout_s = (int)parse_long("--idle-timeout", optarg, 1, 86400); break;
		case 'e': srv.cfg.header_timeout_s = (int)parse_long("--header-timeout", optarg, 1, 86400); break;
		case 'r': respawn_limit = (int)parse_long("--respawn-limit", optarg, 0, 4096); break;
		case 'g': srv.cfg.stop_grace_ms = (int)parse_long("--stop-grace-ms", optarg, 0, 3600000); break;
		case 'D':
			srv.cfg.accept_mutex_delay_ms = (int)parse_long("--accept-mutex-delay", optarg, 0, 60000);
			note_knob(&knobs, KNOB_MUTEX, "--accept-mutex-delay");
			break;
		case 'X':
			srv.cfg.accept_mutex_strict = 1;
			note_knob(&knobs, KNOB_MUTEX, "--accept-mutex-strict");
			break;
		case 'C':
			srv.cfg.worker_connections = (int)parse_long("--worker-connections", optarg, 8, 1000000);
			note_knob(&knobs, KNOB_MUTEX, "--worker-connections");
			break;
		case 'M':
			srv.cfg.reuseport_migrate = 1;
			note_knob(&knobs, KNOB_MIGRATE, "--reuseport-migrate");
			break;
		case 'S':
			srv.cfg.shared_epoll = 1;
			note_knob(&knobs, KNOB_SHARED_EPOLL, "--shared-epoll");
			break;
		case 'O': {
			enum handoff_policy p;
			if (handoff_policy_parse(optarg, &p) < 0)
				bad_arg("--handoff-policy %s: expected written, open or off", optarg);
			srv.cfg.handoff_policy = (int)p;
			note_knob(&knobs, KNOB_HANDOFF, "--handoff-policy");
			break;
		}
		case 'Q':
			srv.cfg.handoff_capacity = (int)parse_long("--handoff-capacity", optarg, 1, 65536);
			note_knob(&knobs, KNOB_HANDOFF, "--handoff-capacity");
			break;
		case 'T':
			srv.cfg.steal_threshold = (int)parse_long("--steal-threshold", optarg, 1, 1000000);
			note_knob(&knobs, KNOB_HANDOFF, "--steal-threshold");
			break;
		case 'x': srv.cfg.spawn_workers = 1; break;
		case 'h': usage(stdout); return 0;
		case 'L': list_variants(); return 0;
		case ':': bad_arg("%s: needs a value", argv[optind - 1]); break;
		default: bad_arg("%s: unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		bad_arg("%s: unexpected argument", argv[optind]);
	if (!variant)
		bad_arg("--variant: required");
	srv.cfg.variant = variant_find(variant);
	if (!srv.cfg.variant) {
		char names[512];
		variant_names(names, sizeof(names));
		bad_arg("--variant %s: unknown; valid: %s", variant, names);
	}
	for (unsigned bit = 1; bit <= KNOB_LAST; bit <<= 1)
		if ((knobs.bits & bit) && !(srv.cfg.variant->knobs & bit))
			bad_arg("%s: does not apply to --variant %s", knobs.first[bit], variant);
	if (srv.cfg.variant->modes && !(srv.cfg.variant->modes & (srv.cfg.threads ? MODE_THREADS : MODE_PROCESS)))
		bad_arg("--variant %s: runs in %s", variant,
			srv.cfg.variant->modes & MODE_THREADS ? "threads mode only (--threads N)" :
								"process mode only (--workers N)");
	if (srv.cfg.shared_epoll && !srv.cfg.threads)
		bad_arg("--shared-epoll: threads mode only (one epoll instance is shared within a process; use --threads N)");
	if (srv.cfg.threads && respawn_limit >= 0)
		bad_arg("--respawn-limit: does not apply to --threads (a thread that dies takes the process with it)");
	srv.cfg.respawn_hourly_limit = respawn_limit >= 0 ? respawn_limit : 10 * srv.cfg.workers;
	/* Test knob: cap respawns (0: a killed worker stays dead). */
	srv.cfg.respawn_hourly_limit = (int)env_knob("ACCEPTLAB_TEST_MAX_RESPAWNS", srv.cfg.respawn_hourly_limit,
						     0, 4096);
	if (pin) {
		char err[ERRLEN];
		cpu_set_t allowed;

		srv.cfg.npin = parse_cpu_list(pin, srv.cfg.pin_cpus, MAX_WORKERS, err, sizeof(err));
		if (srv.cfg.npin < 0)
			bad_arg("--pin-workers: %s", err);
		sched_getaffinity(0, sizeof(allowed), &allowed);
		/* A spawned worker is already pinned to its own CPU: not checked. */
		for (int i = 0; i < srv.cfg.npin && !getenv("ACCEPTLAB_SPAWNED"); i++) {
			if (!CPU_ISSET(srv.cfg.pin_cpus[i], &allowed))
				bad_arg("--pin-workers: CPU %d is not available to this process", srv.cfg.pin_cpus[i]);
		}
	}
	if (srv.cfg.spawn_workers && srv.cfg.threads)
		bad_arg("--spawn-workers: process mode only (threads are not exec'd; use --workers N)");
	srv.cfg.argv = argv;
	srv.nslots = srv.cfg.threads ? srv.cfg.workers : 2 * srv.cfg.workers;
	/* A spawned worker ends as a forked one does, with _exit: what it
	 * holds dies with the process (no exit-time leak report either). */
	if (srv.cfg.spawn_workers && getenv("ACCEPTLAB_SPAWNED"))
		_exit(spawned_worker_run(&srv));
	return srv.cfg.threads ? threads_run(&srv) : supervisor_run(&srv);
}
