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
#define HELP_WIDTH 79     /* --help's wrapped text */
#define VARIANT_HELP_COL 25 /* where a variant's mechanism starts in --help */
#define ENV_HELP_COL 36     /* where an environment variable's effect starts */

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

/* The environment the server reads, written once: --help prints it,
 * --list-environment prints it as JSON lines, and docs/server.md's tables
 * are generated from those (ci/server_tables.py). Two kinds, kept apart by
 * name: a knob chooses how a variant runs (an arm sets it, like an option);
 * a test switch, ACCEPTLAB_TEST_*, exists for the tests and the gate and is
 * never needed to serve. The text marks code with backquotes (dropped in
 * --help). */
enum env_kind { ENV_KNOB, ENV_TEST, ENV_INTERNAL };
static const struct env_var {
	enum env_kind kind;
	const char *name;
	const char *value;   /* its value's form */
	const char *applies; /* who reads it: a variant, a mode, or the server */
	const char *effect;
} environment[] = {
	{ ENV_KNOB, "ACCEPTLAB_ACCEPT_SHARE", "0", "fdpass",
	  "the knob-off arm: the bare race, in the same binary, with no hand-off (default `1`: the "
	  "acceptor passes each connection to the least-loaded sibling)" },
	{ ENV_KNOB, "ACCEPTLAB_ACCEPT_EXCLUSIVE", "0", "fdpass",
	  "the herd: every worker woken per connection, the listener edge-triggered, and a woken worker "
	  "that is not the least loaded leaves the accept to the one that is (deferral), else hands it "
	  "over (default `1`: one worker woken, the listener level-triggered with `EPOLLEXCLUSIVE` and "
	  "re-added, to the back of the kernel's waiters, by a worker once a sibling is less loaded; what "
	  "the pick gives a sibling is handed over)" },
	{ ENV_KNOB, "ACCEPTLAB_ACCOUNTING", "user|kernel", "fdpass, handoff, reuseport-bpf",
	  "how the balancers count load (Load accounting in docs/server.md): `user` in user space without BPF "
	  "(reuseport-bpf refuses it), `kernel` exits 2 when BPF cannot be loaded instead of falling back; "
	  "unset: kernel when BPF loads, else user" },
	{ ENV_TEST, "ACCEPTLAB_TEST_ARM_GAP_MS", "I:MS", "the harness",
	  "worker I waits MS ms after it is ready, before its loop starts (a slow application import)" },
	{ ENV_TEST, "ACCEPTLAB_TEST_MAX_RESPAWNS", "N", "process mode",
	  "at most N respawns (`0`: a killed worker stays dead)" },
	{ ENV_TEST, "ACCEPTLAB_TEST_FAIL_SLOT", "S", "process mode",
	  "a worker started in slot S exits 1 before it serves (a reload's new worker for index i is in "
	  "slot i + workers)" },
	{ ENV_TEST, "ACCEPTLAB_TEST_SEND_GAP_MS", "N", "fdpass",
	  "sleep N ms between the pick and the send (the leaving race)" },
	{ ENV_TEST, "ACCEPTLAB_TEST_PICK_GAP_MS", "N", "fdpass",
	  "an acceptor sleeps N ms between its pick and counting it (deciders at once, each late to see "
	  "the others' picks)" },
	{ ENV_TEST, "ACCEPTLAB_TEST_STOP_AT", "POINT", "fdpass",
	  "the first worker to reach POINT stops itself (SIGSTOP), as a kill there would find it: "
	  "`keep-held`, `keep-tagged` (an acceptor keeping a connection, before and after its tag), "
	  "`peeked`, `retired`, `dequeued`, `tagged` (a receiver's steps), `credited`, `send-failed`, "
	  "`sent` (a sender's)" },
	{ ENV_TEST, "ACCEPTLAB_TEST_NO_PICK", "1", "fdpass",
	  "every acceptor keeps what it accepts (a broken build, to prove the gate can fail)" },
	{ ENV_TEST, "ACCEPTLAB_TEST_NO_DEFER", "1", "fdpass",
	  "every connection the pick gives a sibling is handed over (the hand-off's kill windows): the "
	  "herd never defers, and a worker woken alone never moves behind its siblings, so the kernel "
	  "keeps waking it" },
	{ ENV_TEST, "ACCEPTLAB_TEST_HOLD_TOKEN_MS", "N", "mutex",
	  "the first worker to take the token holds it N ms" },
	{ ENV_TEST, "ACCEPTLAB_TEST_MAX_TAGS", "N", "fdpass (kernel accounting, processes)",
	  "the connection tags' array holds N entries (default 4096): more connections find their entry "
	  "taken and keep their tags in socket storage" },
	{ ENV_TEST, "ACCEPTLAB_TEST_PRELOAD", "I:N", "reuseport-bpf",
	  "worker I's held count starts at N" },
	{ ENV_INTERNAL, "ACCEPTLAB_SPAWNED", "...", "--spawn-workers",
	  "set by the supervisor for a worker it execs: which inherited descriptors are which; never set "
	  "it by hand" },
};
#define NENV (int)(sizeof(environment) / sizeof(environment[0]))
static const char *const env_kind_names[] = { [ENV_KNOB] = "knob", [ENV_TEST] = "test", [ENV_INTERNAL] = "internal" };

/* Prints lead, then text wrapped at HELP_WIDTH with continuation lines
 * indented to column col (text's backquotes dropped: they mark code for
 * the markdown tables). A lead wider than col puts text on the next line. */
static void print_wrapped(FILE *f, const char *lead, int col, const char *text)
{
	int at = (int)strlen(lead);
	const char *p = text;

	fputs(lead, f);
	if (at > col) {
		fprintf(f, "\n%*s", col, "");
		at = col;
	} else {
		fprintf(f, "%*s", col - at, "");
		at = col;
	}
	while (*p) {
		const char *end = p;
		int len = 0;

		while (*end && *end != ' ')
			len += *end++ != '`';
		if (at > col && at + 1 + len > HELP_WIDTH) {
			fprintf(f, "\n%*s", col, "");
			at = col;
		} else if (at > col) {
			fputc(' ', f);
			at++;
		}
		for (; p < end; p++)
			if (*p != '`')
				fputc(*p, f);
		at += len;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

/* The environment section of --help: kind's variables. */
static void usage_environment(FILE *f, enum env_kind kind)
{
	for (int i = 0; i < NENV; i++) {
		char lead[128], text[1024];

		if (environment[i].kind != kind)
			continue;
		snprintf(lead, sizeof(lead), "  %s=%s", environment[i].name, environment[i].value);
		snprintf(text, sizeof(text), "%s: %s", environment[i].applies, environment[i].effect);
		print_wrapped(f, lead, ENV_HELP_COL, text);
	}
}

/* Writes s as a JSON string. */
static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* --list-environment: one JSON line per variable the server reads. */
static void list_environment(void)
{
	for (int i = 0; i < NENV; i++) {
		printf("{\"name\":");
		json_string(environment[i].name);
		printf(",\"value\":");
		json_string(environment[i].value);
		printf(",\"kind\":\"%s\",\"applies\":", env_kind_names[environment[i].kind]);
		json_string(environment[i].applies);
		printf(",\"effect\":");
		json_string(environment[i].effect);
		printf("}\n");
	}
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
		"       " PROG " --list-variants | --list-environment\n"
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
	for (int i = 0; accept_variants[i]; i++) {
		char lead[64];

		snprintf(lead, sizeof(lead), "      %-18s ", accept_variants[i]->name);
		print_wrapped(f, lead, VARIANT_HELP_COL, accept_variants[i]->mechanism);
	}
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
		"                        (a slowloris; default 10); blocking: S seconds after\n"
		"                        its accept (a worker holds one connection at a time)\n"
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
		"                        knob options it reads, whether it answers one request\n"
		"                        per connection, mechanism) and exit 0\n"
		"  --list-environment    print each environment variable below as one JSON line\n"
		"                        (name, value, kind, applies, effect) and exit 0\n"
		"  --help                this text\n"
		"\n"
		"Environment, knobs (a variant's choice; an arm sets it like an option):\n");
	usage_environment(f, ENV_KNOB);
	fprintf(f,
		"Environment, test switches (ACCEPTLAB_TEST_*: for the tests and the gate,\n"
		"never needed to serve):\n");
	usage_environment(f, ENV_TEST);
	fprintf(f,
		"\n"
		"SIGTERM or SIGINT: workers finish in-flight requests, the server exits 0.\n"
		"SIGHUP (process mode): reload. Every worker is replaced, one at a time: the new\n"
		"one serves before the old one stops taking connections; the old one answers\n"
		"each open connection's next request with Connection: close and exits when\n"
		"none is left (idle ones are closed after 1 s). Threads mode refuses it.\n"
		"Exit: 0 stopped by signal, 1 runtime failure, 2 usage error or port in use.\n");
}

/* --list-variants: one JSON line per variant, for tools that keep their
 * own table of what to run (tests/test_arms.py holds acceptlab/arms.py to
 * it) and the variants tables of README.md and docs/server.md
 * (ci/server_tables.py renders them from the mechanism). */
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
		printf("],\"one_request\":%s,\"mechanism\":", v->one_request ? "true" : "false");
		json_string(v->mechanism);
		printf("}\n");
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
	{ "list-environment", no_argument, NULL, 'E' },
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
		case 'E': list_environment(); return 0;
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
	/* Test switch: cap respawns (0: a killed worker stays dead). */
	srv.cfg.respawn_hourly_limit = (int)env_long("ACCEPTLAB_TEST_MAX_RESPAWNS", srv.cfg.respawn_hourly_limit,
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
