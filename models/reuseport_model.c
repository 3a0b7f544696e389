/* reuseport_model.c: reuseport-model, the SO_REUSEPORT burst model. No
 * workers and no HTTP: N listeners bound to one port with SO_REUSEPORT, a
 * burst of K connects, and a count of which listener each landed on.
 *
 * Hypothesis: with no BPF program attached, the kernel picks the listener of
 * a new connection as reciprocal_scale(inet_ehashfn(net, daddr, dport,
 * saddr, sport), N) (net/ipv4/inet_hashtables.c inet_lookup_reuseport ->
 * reuseport_select_sock), a hash of the 4-tuple keyed by a per-boot secret
 * (inet_ehash_secret) and a per-namespace mix (net_hash_mix). For distinct
 * source ports that is as good as a uniform, independent choice per
 * connection, so the split of K over N is multinomial(K, 1/N): the chance
 * of a burst outside 2:1 is a closed number (models/skew.py analytic), and
 * many repetitions here measure it.
 *
 * --seed S binds the client sockets to source ports drawn from a PRNG
 * seeded with S, so the hash input is reproducible. The secret is not: the
 * same seed gives the same splits only within one boot and one network
 * namespace (and the same port), which is why golden tests check this
 * tool's output format (through --replay) and its invariants, never which
 * listener a connection landed on.
 *
 * Every connection is closed with SO_LINGER 0 (an RST, no TIME_WAIT), so
 * thousands of repetitions leave nothing behind in the port space. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG "reuseport-model"
#include "../common/cli.h"
#define MAX_LISTENERS 64
#define MAX_CONNECTIONS 4096
#define MAX_REPETITIONS 100000
#define ACCEPT_TIMEOUT_MS 5000   /* a whole burst must be accepted within this */
#define SEED_PORT_LO 20000       /* seeded source ports come from [LO, LO+SPAN) */
#define SEED_PORT_SPAN 10000
#define SEED_PORT_TRIES 64       /* ports in use are skipped, this many times per connection */
#define LINE_CAP 4096

/* Ratio histogram: the bins every output uses. "outside 2:1" is max > 2*min. */
#define BINS 7
static const char *const bin_names[BINS] = { "1-1.25", "1.25-1.5", "1.5-2", "2-3", "3-5", ">5", "inf" };

struct options {
	int listeners, connections, repetitions, port;
	int has_seed, json, netns;
	uint64_t seed;
	const char *replay; /* a file of per-repetition counts instead of the network */
};

static struct options opt = { .listeners = 2, .connections = 32, .repetitions = 200 };

/* What one run adds up. */
struct summary {
	int repetitions, outside, starved_reps;
	int bins[BINS];
	double max_finite_ratio;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [--listeners N] [--connections K] [--repetitions R] [--port P]\n"
		"                       [--seed S] [--netns] [--json] [--replay FILE]\n"
		"\n"
		"N SO_REUSEPORT listeners on 127.0.0.1:P (no workers, no HTTP). Each repetition\n"
		"opens K non-blocking connects back to back, accepts on every listener until all K\n"
		"are in, counts per listener and closes everything (RST, no TIME_WAIT). Prints each\n"
		"repetition's split (largest first) and max/min ratio (inf: a listener got none),\n"
		"then the fraction of repetitions outside 2:1 (max > 2 x min) and a ratio histogram.\n"
		"\n"
		"  --listeners N    listeners sharing the port, 1..%d (default 2)\n"
		"  --connections K  connects per burst, 1..%d (default 32)\n"
		"  --repetitions R  bursts, 1..%d (default 200)\n"
		"  --port P         the shared port (default 0: the kernel picks one)\n"
		"  --seed S         bind each client to a source port drawn from a PRNG seeded with\n"
		"                   S (range %d..%d), so the 4-tuples are reproducible. The kernel's\n"
		"                   hash also mixes a per-boot secret and a per-namespace value: the\n"
		"                   same seed and port give the same splits only within one boot and\n"
		"                   one network namespace\n"
		"  --netns          run in a network namespace of its own (unshare(CLONE_NEWNET),\n"
		"                   lo brought up): leaves the host's loopback port space alone; root\n"
		"  --json           one JSON object per line: a line per repetition, then a summary\n"
		"  --replay FILE    no network: read per-repetition counts (one repetition a line,\n"
		"                   counts separated by '/', ',' or spaces; '#' starts a comment) and\n"
		"                   print them exactly as a measured run would be printed\n"
		"\n"
		"Exit: 0 ok; 1 a burst was not fully accepted (or the network failed); 2 usage error.\n",
		MAX_LISTENERS, MAX_CONNECTIONS, MAX_REPETITIONS, SEED_PORT_LO,
		SEED_PORT_LO + SEED_PORT_SPAN - 1);
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listeners", required_argument, NULL, 'n' },
		{ "connections", required_argument, NULL, 'k' },
		{ "repetitions", required_argument, NULL, 'r' },
		{ "port", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 's' },
		{ "netns", no_argument, NULL, 'N' },
		{ "json", no_argument, NULL, 'j' },
		{ "replay", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': opt.listeners = (int)parse_long("--listeners", optarg, 1, MAX_LISTENERS); break;
		case 'k': opt.connections = (int)parse_long("--connections", optarg, 1, MAX_CONNECTIONS); break;
		case 'r': opt.repetitions = (int)parse_long("--repetitions", optarg, 1, MAX_REPETITIONS); break;
		case 'p': opt.port = (int)parse_long("--port", optarg, 0, 65535); break;
		case 's':
			opt.seed = (uint64_t)parse_long("--seed", optarg, 0, 0x7fffffffL);
			opt.has_seed = 1;
			break;
		case 'N': opt.netns = 1; break;
		case 'j': opt.json = 1; break;
		case 'R': opt.replay = optarg; break;
		case 'h': usage(stdout); exit(0);
		case ':': bad_arg("%s: needs a value", argv[optind - 1]);
		default:  bad_arg("%s: unknown argument", argv[optind - 1]);
		}
	}
	if (optind < argc)
		bad_arg("%s: unexpected argument", argv[optind]);
	if (opt.replay && (opt.netns || opt.has_seed || opt.port))
		bad_arg("--replay: reads counts from a file; --netns, --seed and --port do not apply");
}

/* splitmix64: a small, well-mixed PRNG whose sequence is fixed by its seed. */
static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int cmp_desc(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x < y) - (x > y);
}

/* Formats counts largest first, "19/13"; returns the number of listeners with none. */
static int format_split(const int *counts, int n, char *out, size_t cap)
{
	int sorted[MAX_LISTENERS], starved = 0;
	size_t len = 0;

	memcpy(sorted, counts, sizeof(int) * (size_t)n);
	qsort(sorted, (size_t)n, sizeof(int), cmp_desc);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		len += (size_t)snprintf(out + len, cap - len, "%s%d", i ? "/" : "", sorted[i]);
		if (len >= cap)
			len = cap - 1;
		if (sorted[i] == 0)
			starved++;
	}
	return starved;
}

/* Records one repetition in the summary and prints its line. */
static void report_repetition(struct summary *s, int rep, const int *counts, int n)
{
	char split[LINE_CAP];
	int lo = counts[0], hi = counts[0], starved, bin;
	double ratio = 0;

	for (int i = 1; i < n; i++) {
		if (counts[i] < lo)
			lo = counts[i];
		if (counts[i] > hi)
			hi = counts[i];
	}
	starved = format_split(counts, n, split, sizeof(split));
	/* Integer test: 2:1 exactly (20/10) is inside, a listener with none is outside. */
	if (lo == 0 || hi > 2 * lo)
		s->outside++;
	if (lo == 0) {
		bin = BINS - 1;
		s->starved_reps++;
	} else {
		ratio = (double)hi / lo;
		if (ratio > s->max_finite_ratio)
			s->max_finite_ratio = ratio;
		if (4 * hi < 5 * lo)
			bin = 0;
		else if (2 * hi < 3 * lo)
			bin = 1;
		else if (hi <= 2 * lo)
			bin = 2;
		else if (hi <= 3 * lo)
			bin = 3;
		else if (hi <= 5 * lo)
			bin = 4;
		else
			bin = 5;
	}
	s->bins[bin]++;
	s->repetitions++;

	if (opt.json) {
		printf("{\"type\":\"repetition\",\"repetition\":%d,\"counts\":[", rep);
		for (int i = 0; i < n; i++)
			printf("%s%d", i ? "," : "", counts[i]);
		if (lo == 0)
			printf("],\"split\":\"%s\",\"ratio\":null,\"starved\":%d}\n", split, starved);
		else
			printf("],\"split\":\"%s\",\"ratio\":%.3f,\"starved\":%d}\n", split, ratio, starved);
	} else if (lo == 0) {
		printf("rep %4d: %-16s ratio inf\n", rep, split);
	} else {
		printf("rep %4d: %-16s ratio %.2f\n", rep, split, ratio);
	}
}

static void report_summary(const struct summary *s, int listeners, int connections, int port)
{
	double frac = s->repetitions ? (double)s->outside / s->repetitions : 0;

	if (opt.json) {
		printf("{\"type\":\"summary\",\"listeners\":%d,\"connections\":%d,\"repetitions\":%d,",
		       listeners, connections, s->repetitions);
		if (opt.replay)
			printf("\"replay\":true,");
		else
			printf("\"port\":%d,\"netns\":%s,\"source_ports\":\"%s\",", port,
			       opt.netns ? "true" : "false", opt.has_seed ? "seeded" : "ephemeral");
		if (opt.has_seed)
			printf("\"seed\":%llu,", (unsigned long long)opt.seed);
		else
			printf("\"seed\":null,");
		printf("\"outside\":%d,\"fraction_outside\":%.4f,\"starved\":%d,\"max_finite_ratio\":%.3f,"
		       "\"histogram\":{", s->outside, frac, s->starved_reps, s->max_finite_ratio);
		for (int b = 0; b < BINS; b++)
			printf("%s\"%s\":%d", b ? "," : "", bin_names[b], s->bins[b]);
		printf("}}\n");
		return;
	}
	printf("summary: %d listeners, %d connections x %d repetitions: outside 2:1 in %d (%.3f), "
	       "a listener with none in %d\n", listeners, connections, s->repetitions, s->outside, frac,
	       s->starved_reps);
	printf("ratios:");
	for (int b = 0; b < BINS; b++)
		printf(" %s:%d", bin_names[b], s->bins[b]);
	printf("\n");
}

/* --replay: counts from a file, printed as a measured run would be. */
static int run_replay(void)
{
	FILE *f = fopen(opt.replay, "r");
	char line[LINE_CAP];
	int lineno = 0, listeners = 0, connections = -1, rep = 0;
	struct summary s;

	if (!f)
		bad_arg("--replay %s: %s", opt.replay, strerror(errno));
	memset(&s, 0, sizeof(s));
	while (fgets(line, sizeof(line), f)) {
		int counts[MAX_LISTENERS], n = 0, sum = 0;
		char *p = line, *hash = strchr(line, '#');

		lineno++;
		if (hash)
			*hash = '\0';
		for (;;) {
			char *end;
			long v;

			while (*p == ' ' || *p == '\t' || *p == '/' || *p == ',' || *p == '\n' || *p == '\r')
				p++;
			if (!*p)
				break;
			errno = 0;
			v = strtol(p, &end, 10);
			if (end == p || errno || v < 0 || v > MAX_CONNECTIONS || n == MAX_LISTENERS) {
				fclose(f);
				bad_arg("--replay %s:%d: expected up to %d counts in 0..%d", opt.replay,
					lineno, MAX_LISTENERS, MAX_CONNECTIONS);
			}
			counts[n++] = (int)v;
			sum += (int)v;
			p = end;
		}
		if (n == 0)
			continue;
		if (listeners == 0) {
			listeners = n;
			connections = sum;
			if (!opt.json)
				printf(PROG ": replay of %s: %d listeners, %d connections per repetition\n",
				       opt.replay, listeners, connections);
		} else if (n != listeners || sum != connections) {
			fclose(f);
			bad_arg("--replay %s:%d: %d counts summing to %d; the first repetition had %d "
				"summing to %d", opt.replay, lineno, n, sum, listeners, connections);
		}
		report_repetition(&s, ++rep, counts, n);
	}
	fclose(f);
	if (rep == 0)
		bad_arg("--replay %s: no repetitions in the file", opt.replay);
	report_summary(&s, listeners, connections, 0);
	return 0;
}

/* A network namespace of our own with lo up, so bursts never touch the
 * host's loopback port space. Returns 0 or -1 with a message in err. */
static int enter_netns(char *err, size_t cap)
{
	struct ifreq ifr;
	int fd;

	if (unshare(CLONE_NEWNET) < 0) {
		snprintf(err, cap, "unshare(CLONE_NEWNET): %s (needs root / CAP_SYS_ADMIN)", strerror(errno));
		return -1;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, cap, "socket: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		snprintf(err, cap, "reading lo's flags: %s", strerror(errno));
		close(fd);
		return -1;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) {
		snprintf(err, cap, "bringing lo up: %s", strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static void set_linger0(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

/* Binds N SO_REUSEPORT listeners to 127.0.0.1:port (0: the first picks it).
 * Returns the port, or -1 with a message in err. */
static int open_listeners(int *fds, int n, int port, char *err, size_t cap)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int one = 1;

	for (int i = 0; i < n; i++)
		fds[i] = -1;
	for (int i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fds[i] < 0) {
			snprintf(err, cap, "socket: %s", strerror(errno));
			return -1;
		}
		setsockopt(fds[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sa.sin_port = htons((unsigned short)port);
		if (bind(fds[i], (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			snprintf(err, cap, "bind 127.0.0.1:%d: %s", port, strerror(errno));
			return -1;
		}
		/* The backlog holds a whole burst: no SYN is dropped and retried. */
		if (listen(fds[i], opt.connections + 64) < 0) {
			snprintf(err, cap, "listen: %s", strerror(errno));
			return -1;
		}
		if (port == 0) {
			if (getsockname(fds[i], (struct sockaddr *)&sa, &len) < 0) {
				snprintf(err, cap, "getsockname: %s", strerror(errno));
				return -1;
			}
			port = ntohs(sa.sin_port);
		}
	}
	return port;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Opens a client socket, bound to a seeded source port when --seed is
 * given, and starts its connect. Returns the fd or -1 (message in err). */
static int start_connect(int port, uint64_t *prng, unsigned char *used, char *err, size_t cap)
{
	struct sockaddr_in dst, src;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		snprintf(err, cap, "socket: %s", strerror(errno));
		return -1;
	}
	set_linger0(fd);
	if (prng) {
		int tries = 0;

		memset(&src, 0, sizeof(src));
		src.sin_family = AF_INET;
		src.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		for (;;) {
			int p = SEED_PORT_LO + (int)(splitmix64(prng) % SEED_PORT_SPAN);

			if (p == port || used[p - SEED_PORT_LO])
				continue; /* the listener's own port, or one this burst already has */
			src.sin_port = htons((unsigned short)p);
			if (bind(fd, (struct sockaddr *)&src, sizeof(src)) == 0) {
				used[p - SEED_PORT_LO] = 1;
				break;
			}
			if (errno != EADDRINUSE || ++tries == SEED_PORT_TRIES) {
				snprintf(err, cap, "bind source port %d: %s", p, strerror(errno));
				close(fd);
				return -1;
			}
		}
	}
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	dst.sin_port = htons((unsigned short)port);
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) < 0 && errno != EINPROGRESS) {
		snprintf(err, cap, "connect 127.0.0.1:%d: %s", port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* One burst: K connects back to back, then accept on every listener until
 * all K are in. Fills counts[]; returns 0 or -1 (message in err). */
static int burst(const int *lfds, int n, int port, uint64_t *prng, int *counts, char *err, size_t cap)
{
	static int clients[MAX_CONNECTIONS], accepted[MAX_CONNECTIONS];
	static unsigned char used[SEED_PORT_SPAN];
	struct pollfd pfds[MAX_LISTENERS];
	int k = opt.connections, opened = 0, got = 0, rc = -1;
	long deadline;

	memset(used, 0, sizeof(used));
	for (int i = 0; i < n; i++)
		counts[i] = 0;
	for (; opened < k; opened++) {
		clients[opened] = start_connect(port, prng, used, err, cap);
		if (clients[opened] < 0)
			goto out;
	}
	deadline = now_ms() + ACCEPT_TIMEOUT_MS;
	while (got < k) {
		long left = deadline - now_ms();

		if (left <= 0) {
			snprintf(err, cap, "accepted %d of %d connections within %d ms", got, k,
				 ACCEPT_TIMEOUT_MS);
			goto out;
		}
		for (int i = 0; i < n; i++) {
			pfds[i].fd = lfds[i];
			pfds[i].events = POLLIN;
		}
		if (poll(pfds, (nfds_t)n, (int)left) < 0 && errno != EINTR) {
			snprintf(err, cap, "poll: %s", strerror(errno));
			goto out;
		}
		for (int i = 0; i < n && got < k; i++) {
			if (!(pfds[i].revents & POLLIN))
				continue;
			for (;;) {
				int fd = accept4(lfds[i], NULL, NULL, SOCK_CLOEXEC);

				if (fd < 0) {
					if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
					    errno == ECONNABORTED)
						break;
					snprintf(err, cap, "accept: %s", strerror(errno));
					goto out;
				}
				set_linger0(fd);
				accepted[got++] = fd;
				counts[i]++;
				if (got == k)
					break;
			}
		}
	}
	rc = 0;
out:
	for (int i = 0; i < opened; i++)
		close(clients[i]);
	for (int i = 0; i < got; i++)
		close(accepted[i]);
	return rc;
}

static int run_network(void)
{
	int lfds[MAX_LISTENERS], counts[MAX_LISTENERS], port, rc = 0;
	char err[256];
	struct summary s;
	uint64_t prng = opt.seed;

	if (opt.netns && enter_netns(err, sizeof(err)) < 0)
		bad_arg("--netns: %s", err);
	port = open_listeners(lfds, opt.listeners, opt.port, err, sizeof(err));
	if (port < 0) {
		if (opt.port)
			bad_arg("--port %d: %s", opt.port, err);
		die(1, "%s", err);
	}
	if (!opt.json)
		printf(PROG ": %d listeners on 127.0.0.1:%d%s, %d connections x %d repetitions, %s source "
		       "ports\n", opt.listeners, port, opt.netns ? " (own network namespace)" : "",
		       opt.connections, opt.repetitions, opt.has_seed ? "seeded" : "ephemeral");
	memset(&s, 0, sizeof(s));
	for (int rep = 1; rep <= opt.repetitions; rep++) {
		if (burst(lfds, opt.listeners, port, opt.has_seed ? &prng : NULL, counts, err, sizeof(err)) < 0) {
			fprintf(stderr, PROG ": repetition %d: %s\n", rep, err);
			rc = 1;
			break;
		}
		report_repetition(&s, rep, counts, opt.listeners);
	}
	for (int i = 0; i < opt.listeners; i++)
		close(lfds[i]);
	if (s.repetitions)
		report_summary(&s, opt.listeners, opt.connections, port);
	return rc;
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return opt.replay ? run_replay() : run_network();
}
