/* main.c: acceptlab-server's command line. Parses and validates every
 * argument (exit 2 with a one-line message naming the bad one), then hands
 * over to the supervisor. */
#include "server.h"

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

#define MAX_SETS 32  /* knob sets, all variants */
#define MAX_KNOBS 64 /* knobs, all sets */
#define KNOB_CODE 256 /* getopt's value for knob i: KNOB_CODE + i */
#define SYNOPSIS_INDENT "                        "
#define SYNOPSIS_WIDTH 80

/* Every knob set, in --help order: knob_sets_help_order (variants.c), then
 * any set a variant reads that is missing there. */
static const struct knob_set *sets[MAX_SETS];
static int nsets;

static int set_index(const struct knob_set *ks)
{
	for (int i = 0; i < nsets; i++)
		if (sets[i] == ks)
			return i;
	return -1;
}

static void add_set(const struct knob_set *ks)
{
	if (set_index(ks) >= 0)
		return;
	if (nsets == MAX_SETS)
		die(1, "more than %d knob sets: raise MAX_SETS", MAX_SETS);
	sets[nsets++] = ks;
}

static void collect_sets(void)
{
	for (int i = 0; knob_sets_help_order[i]; i++)
		add_set(knob_sets_help_order[i]);
	for (int i = 0; accept_variants[i]; i++)
		for (int k = 0; k < MAX_KNOB_SETS && accept_variants[i]->knob_sets[k]; k++)
			add_set(accept_variants[i]->knob_sets[k]);
}

static int variant_reads(const struct accept_variant *v, const struct knob_set *ks)
{
	for (int k = 0; k < MAX_KNOB_SETS && v->knob_sets[k]; k++)
		if (v->knob_sets[k] == ks)
			return 1;
	return 0;
}

/* The knobs' synopsis: "[--name ARG]" items, wrapped at SYNOPSIS_WIDTH. */
static void knob_synopsis(FILE *f)
{
	int col = 0;

	for (int i = 0; i < nsets; i++) {
		for (const struct knob *k = sets[i]->knobs; k->name; k++) {
			int n = (int)strlen(k->name) + 2 + (k->arg ? 1 + (int)strlen(k->arg) : 0);

			if (col && col + 1 + n > SYNOPSIS_WIDTH) {
				fputc('\n', f);
				col = 0;
			}
			fputs(col ? " " : SYNOPSIS_INDENT, f);
			col += col ? 1 : (int)strlen(SYNOPSIS_INDENT);
			fprintf(f, "[%s%s%s]", k->name, k->arg ? " " : "", k->arg ? k->arg : "");
			col += n;
		}
	}
	if (col)
		fputc('\n', f);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " --variant NAME [--workers N | --threads N] [--host 127.0.0.1]\n"
		"                        [--port P]"
		" [--pin-workers CPULIST] [--idle-timeout S]\n"
		"                        [--header-timeout S]\n"
		"                        [--respawn-limit N] [--stop-grace-ms MS]\n");
	knob_synopsis(f);
	fprintf(f,
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
		"  --stop-grace-ms MS    on SIGTERM, workers get MS to finish before SIGKILL (default 10000)\n",
		MAX_WORKERS);
	for (int i = 0; i < nsets; i++)
		for (const struct knob *k = sets[i]->knobs; k->name; k++)
			fputs(k->help, f);
	fprintf(f,
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
		"Exit: 0 stopped by signal, 1 runtime failure, 2 usage error or port in use.\n");
}

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
		for (int s = 0; s < MAX_KNOB_SETS && v->knob_sets[s]; s++) {
			for (const struct knob *k = v->knob_sets[s]->knobs; k->name; k++) {
				printf("%s\"%s\"", first ? "" : ",", k->name);
				first = 0;
			}
		}
		printf("],\"mechanism\":\"%s\"}\n", v->mechanism);
	}
}

/* The getopt table: main's own options, then every knob (value KNOB_CODE +
 * its index in knobs[], set_of[] its set's index in sets[]). */
static const struct option core_opts[] = {
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
	{ "spawn-workers", no_argument, NULL, 'x' },
	{ "list-variants", no_argument, NULL, 'L' },
	{ "help", no_argument, NULL, 'h' },
};
#define NCORE (int)(sizeof(core_opts) / sizeof(core_opts[0]))
static struct option opts[NCORE + MAX_KNOBS + 1];
static const struct knob *knobs[MAX_KNOBS];
static int set_of[MAX_KNOBS];

static void build_options(void)
{
	int n = 0;

	memcpy(opts, core_opts, sizeof(core_opts));
	for (int i = 0; i < nsets; i++) {
		for (const struct knob *k = sets[i]->knobs; k->name; k++) {
			if (n == MAX_KNOBS)
				die(1, "more than %d knobs: raise MAX_KNOBS", MAX_KNOBS);
			knobs[n] = k;
			set_of[n] = i;
			opts[NCORE + n] = (struct option){ k->name + 2, k->arg ? required_argument : no_argument, NULL,
							   KNOB_CODE + n };
			n++;
		}
	}
	opts[NCORE + n] = (struct option){ NULL, 0, NULL, 0 };
}

int main(int argc, char **argv)
{
	static struct server srv;
	/* For each knob set, the first of its knobs given (to name in the
	 * error if the variant does not read the set). */
	const char *first_given[MAX_SETS] = { NULL };
	const char *variant = NULL, *pin = NULL, *workers_opt = NULL;
	char err[ERRLEN];
	int respawn_limit = -1, c;

	collect_sets();
	build_options();
	srv.cfg.workers = 2;
	srv.cfg.host = "127.0.0.1";
	srv.cfg.port = 8080;
	srv.cfg.idle_timeout_s = 30;
	srv.cfg.header_timeout_s = 10;
	srv.cfg.stop_grace_ms = 10000;

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
		case 'x': srv.cfg.spawn_workers = 1; break;
		case 'h': usage(stdout); return 0;
		case 'L': list_variants(); return 0;
		case ':': bad_arg("%s: needs a value", argv[optind - 1]); break;
		default:
			if (c >= KNOB_CODE && c < KNOB_CODE + MAX_KNOBS && knobs[c - KNOB_CODE]) {
				const struct knob *k = knobs[c - KNOB_CODE];

				if (k->flag)
					*k->flag = 1;
				else if (k->parse(optarg, err, sizeof(err)) < 0)
					bad_arg("%s", err);
				if (!first_given[set_of[c - KNOB_CODE]])
					first_given[set_of[c - KNOB_CODE]] = k->name;
				break;
			}
			bad_arg("%s: unknown option", argv[optind - 1]);
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
	for (int i = 0; i < nsets; i++)
		if (first_given[i] && !variant_reads(srv.cfg.variant, sets[i]))
			bad_arg("%s: does not apply to --variant %s", first_given[i], variant);
	if (srv.cfg.variant->modes && !(srv.cfg.variant->modes & (srv.cfg.threads ? MODE_THREADS : MODE_PROCESS)))
		bad_arg("--variant %s: runs in %s", variant,
			srv.cfg.variant->modes & MODE_THREADS ? "threads mode only (--threads N)" :
								"process mode only (--workers N)");
	for (int k = 0; k < MAX_KNOB_SETS && srv.cfg.variant->knob_sets[k]; k++) {
		const struct knob_set *ks = srv.cfg.variant->knob_sets[k];

		if (ks->check && ks->check(&srv.cfg, err, sizeof(err)) < 0)
			bad_arg("%s", err);
	}
	if (srv.cfg.threads && respawn_limit >= 0)
		bad_arg("--respawn-limit: does not apply to --threads (a thread that dies takes the process with it)");
	srv.cfg.respawn_hourly_limit = respawn_limit >= 0 ? respawn_limit : 10 * srv.cfg.workers;
	/* Test knob: cap respawns (0: a killed worker stays dead). */
	srv.cfg.respawn_hourly_limit = (int)env_knob("ACCEPTLAB_TEST_MAX_RESPAWNS", srv.cfg.respawn_hourly_limit,
						     0, 4096);
	if (pin) {
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
