/* probe.c: acceptlab-probe, the client that asks every connection which
 * worker holds it. One thread, one epoll; shapes burst, ramp, keepalive and
 * oneshot; counts per worker, latencies, and every error by kind. The
 * server's ready line is read by ready_line.c; --stop-winner's stop,
 * verdict and continue are stop_winner.c's, its rerun is run_rounds here.
 * Without attribution it loads any server: --worker-from none asks any
 * path and counts complete answers of any status (resp_framer), --tcp
 * only connects, holds and closes. */
#include "ready_line.h"
#include "response.h"
#include "stop_winner.h"
#include "tally.h"
#include "timing.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG "acceptlab-probe"
#include "../common/cli.h"
#define MAX_CONNECTIONS 20000
#define BUF_CAP 8192
#define PATH_MAX_LEN 2048
#define REQ_CAP (PATH_MAX_LEN + 512) /* the request line, Host (a target of at most 262 bytes) and the rest */
#define USER_AGENT "acceptlab-probe/1"

enum shape { SHAPE_BURST, SHAPE_RAMP, SHAPE_KEEPALIVE, SHAPE_ONESHOT };
static const char *const shape_names[] = { "burst", "ramp", "keepalive", "oneshot" };

/* --pause-at: where a round holds its connections for a driver to look. */
enum pause_at { PAUSE_NONE, PAUSE_OPEN, PAUSE_ASKED };
static const char *const pause_names[] = { "none", "open", "asked" };

/* The names of tally.h's enum err_kind, in its order. */
static const char *const err_names[] = { "refused", "connect_timeout", "reset", "eof", "timeout",
					 "bad_response", "send", "other" };

struct options {
	struct sockaddr_in target;
	const char *target_str;
	enum shape shape;
	int connections, rounds, gap_ms, requests, round_gap_ms, timeout_ms;
	int pin;
	const char *path;
	const char *worker_header; /* NULL: the id is the body's first line */
	double max_ratio;          /* <= 0: not checked */
	int stop_winner, json, latencies;
	enum pause_at pause_at;
	const char *workers_from;
	int expect_workers;
	int no_worker;  /* --worker-from none (or --tcp): count answers, attribute none */
	int tcp;        /* --tcp: connect, hold --hold-ms, close; no request */
	int hold_ms;
};

enum cstate { C_CONNECTING, C_OPEN, C_ASKING, C_DONE, C_FAILED };

struct pconn {
	int fd;
	enum cstate state;
	int64_t t_start, t_sent, t_done; /* t_done: first answer complete */
	char owner[ID_LEN]; /* who answered this connection first */
	struct resp_framer fr; /* --worker-from none: where the answer in progress ends */
	size_t len;
	char buf[BUF_CAP];
};

static struct options opt;
static int epfd = -1;
static struct pconn *conns;
static int64_t *lat_connect, *lat_first;
static int nlat_connect, nlat_first;
static int64_t round_t0; /* the round's first connect */
static int stdin_ended;   /* --pause-at: stdin reached EOF, so no hold waits any more */

static void on_fatal_signal(int sig)
{
	stop_winner_continue();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " --target HOST:PORT --shape burst|ramp|keepalive|oneshot\n"
		"                       [--connections N] [--rounds R] [--gap-ms G] [--requests M]\n"
		"                       [--pin CPU] [--path /pid] [--worker-from body|header:NAME|none]\n"
		"                       [--max-ratio X] [--stop-winner] [--workers-from FILE]\n"
		"                       [--expect-workers N] [--timeout-ms T] [--round-gap-ms G] [--json]\n"
		"                       [--latencies] [--pause-at open|asked] [--tcp [--hold-ms MS]]\n"
		"\n"
		"Asks which worker holds each connection and counts per worker.\n"
		"  burst      open N connections at once (connects issued back to back), then,\n"
		"             with all of them open, ask once on each (default N 32)\n"
		"  ramp       open N one at a time, --gap-ms apart (default 10), hold them, then ask\n"
		"  keepalive  open N at once and hold them; ask M times on each (--requests, default 4),\n"
		"             --gap-ms between waves (default 10); flags connections answered by two workers\n"
		"  oneshot    --rounds rounds (default 10) of N sequential fresh connections\n"
		"             (default 8), each closed before the next, --gap-ms apart (default 5)\n"
		"\n"
		"Each round prints 'burst 32: 17/15' (largest share first; workers known from\n"
		"--workers-from or --expect-workers that got none show as 0). With --json, stdout\n"
		"has one JSON object per round and a summary; the human lines go to stderr.\n"
		"If any connection went unanswered, a last line on stderr says how many, of which\n"
		"kinds (refused, connect_timeout, reset, eof, timeout, bad_response, send, other)\n"
		"and what the commonest one means.\n"
		"\n"
		"  --worker-from body|header:NAME  where the worker id is (default body: first line)\n"
		"  --worker-from none   load without attribution, for a server that does not answer\n"
		"                       /pid: each connection asks --path (any, e.g. /), a complete\n"
		"                       HTTP/1.x answer of any status counts (Content-Length, chunked or\n"
		"                       until the close); lines read 'burst 32: 32 answered', and\n"
		"                       --json rounds carry \"worker_from\":\"none\", answered, unanswered\n"
		"                       and statuses, no split (not with --max-ratio, --stop-winner,\n"
		"                       --workers-from or --expect-workers)\n"
		"  --tcp                no request at all, for servers that do not speak HTTP: burst or\n"
		"                       ramp opens N connections, holds them --hold-ms once all are\n"
		"                       open (default 1000), then closes them; lines read 'burst 32: 32\n"
		"                       opened', --json rounds carry \"tcp\":true, opened, held (still\n"
		"                       open when the hold ended) and failed; implies --worker-from\n"
		"                       none; not with keepalive, oneshot, --path or --pause-at asked\n"
		"  --hold-ms MS         --tcp: how long to hold the connections open (default 1000)\n"
		"  --workers-from FILE  the server's ready line: names every worker (and its pid)\n"
		"  --expect-workers N   how many workers there are, when no ready line is at hand\n"
		"  --max-ratio X        exit 1 if a round's max/min over the workers exceeds X\n"
		"                       (a worker with no connection makes it infinite)\n"
		"  --stop-winner        after the rounds, SIGSTOP the worker that answered most, run\n"
		"                       them again (the others must answer all), then SIGCONT it\n"
		"  --pin CPU            run the probe on that CPU\n"
		"  --timeout-ms T       connect and answer timeout per phase (default 5000)\n"
		"  --round-gap-ms G     pause between rounds (default 100)\n"
		"  --latencies          burst with --json: each round adds completion_us (first connect\n"
		"                       to last answer), latency_us and served_by (per connection:\n"
		"                       connect to complete answer, and the worker that answered)\n"
		"  --pause-at open|asked  hold every round of burst, ramp or keepalive at a known\n"
		"                       point: once all its connections are open (open), or once\n"
		"                       each has been answered and is still open (asked; keepalive:\n"
		"                       after the first request on each). There it prints\n"
		"                       {\"event\":\"held\",\"round\":K,\"at\":\"asked\",\"open\":N} on stdout\n"
		"                       (N: the connections it holds open), and waits for a line on\n"
		"                       stdin before it goes on; at EOF on stdin it goes on at once,\n"
		"                       then and at every later hold\n"
		"\n"
		"  --path PATH          what each connection asks (default /pid): an absolute path,\n"
		"                       a query allowed (/work?us=2000), no spaces, up to 2048 bytes;\n"
		"                       sent as GET with Host and User-Agent: " USER_AGENT "\n"
		"\n"
		"Exit: 0 ok; 1 a connection went unanswered (--tcp: failed to open or was closed\n"
		"while held), --max-ratio exceeded, or the stopped winner's siblings did not answer\n"
		"all; 2 usage error.\n");
}

static void parse_target(const char *s)
{
	const char *colon = strrchr(s, ':');
	struct addrinfo hints, *res;
	char host[256];
	int port;

	if (!colon || colon == s || (size_t)(colon - s) >= sizeof(host))
		bad_arg("--target %s: expected HOST:PORT", s);
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	port = (int)parse_long("--target port", colon + 1, 1, 65535);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		bad_arg("--target %s: cannot resolve %s to an IPv4 address", s, host);
	memcpy(&opt.target, res->ai_addr, sizeof(opt.target));
	opt.target.sin_port = htons((unsigned short)port);
	freeaddrinfo(res);
	opt.target_str = s;
}

/* Adds a worker id to the tally (if new) and returns its slot, or NULL when full. */
static struct wstat *tally_worker(struct tally *t, const char *id)
{
	for (int i = 0; i < t->n; i++)
		if (strcmp(t->w[i].id, id) == 0)
			return &t->w[i];
	if (t->n == MAX_WORKERS)
		return NULL;
	snprintf(t->w[t->n].id, ID_LEN, "%s", id);
	return &t->w[t->n++];
}

/* Reads the server's ready line: the expected workers, their ids and pids. */
static void load_workers(const char *file, struct tally *known)
{
	static struct ready_worker rw[READY_MAX_WORKERS];
	char err[READY_ERR_LEN];
	int n, threads;

	n = ready_line_read(file, rw, READY_MAX_WORKERS, &threads, err, sizeof(err));
	if (n < 0)
		bad_arg("--workers-from %s: %s", file, err);
	for (int i = 0; i < n && i < READY_MAX_WORKERS; i++) {
		char id[ID_LEN];
		struct wstat *w;

		/* The id the server answers with: its pid in the body, its index in X-Worker. */
		if (opt.worker_header && strcasecmp(opt.worker_header, "X-Worker") == 0)
			snprintf(id, sizeof(id), "%d", rw[i].index);
		else
			snprintf(id, sizeof(id), "%d", threads ? rw[i].tid : rw[i].pid);
		w = tally_worker(known, id);
		if (w)
			w->pid = rw[i].pid;
	}
	if (known->n == 0)
		bad_arg("--workers-from %s: the ready line lists no workers", file);
}

static void record_error(struct tally *t, struct pconn *c, enum err_kind k)
{
	t->errors[k]++;
	c->state = C_FAILED;
	if (c->fd >= 0) {
		epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		c->fd = -1;
	}
}

static void conn_start(struct tally *t, struct pconn *c)
{
	struct epoll_event ev = { .events = EPOLLOUT };
	int one = 1;

	memset(c, 0, offsetof(struct pconn, buf));
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		record_error(t, c, E_OTHER);
		return;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->state = C_CONNECTING;
	c->t_start = now_ns();
	if (connect(c->fd, (struct sockaddr *)&opt.target, sizeof(opt.target)) < 0 && errno != EINPROGRESS) {
		record_error(t, c, errno == ECONNREFUSED ? E_REFUSED : E_OTHER);
		return;
	}
	ev.data.ptr = c;
	epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
}

static void conn_close(struct pconn *c)
{
	if (c->fd >= 0) {
		epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		c->fd = -1;
	}
}

static void conn_ask(struct tally *t, struct pconn *c)
{
	char req[REQ_CAP];
	int n;

	if (c->state != C_OPEN)
		return;
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: " USER_AGENT "\r\nAccept: */*\r\n%s\r\n",
		     opt.path, opt.target_str, opt.shape == SHAPE_ONESHOT ? "Connection: close\r\n" : "");
	if (n < 0 || n >= (int)sizeof(req)) {
		record_error(t, c, E_OTHER); /* never: --path and --target are bounded to fit */
		return;
	}
	c->len = 0;
	resp_framer_init(&c->fr);
	c->t_sent = now_ns();
	if (write(c->fd, req, (size_t)n) != n) {
		record_error(t, c, errno == ECONNRESET || errno == EPIPE ? E_RESET : E_SEND);
		return;
	}
	c->state = C_ASKING;
}

static void on_connected(struct tally *t, struct pconn *c)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
	socklen_t len = sizeof(int);
	int soerr = 0;

	getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
	if (soerr) {
		record_error(t, c, soerr == ECONNREFUSED ? E_REFUSED :
				   soerr == ETIMEDOUT ? E_CONNECT_TIMEOUT : soerr == ECONNRESET ? E_RESET : E_OTHER);
		return;
	}
	lat_connect[nlat_connect++] = (now_ns() - c->t_start) / 1000;
	epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
	c->state = C_OPEN;
	t->opened++;
}

/* 1 if buf[0..len) can begin an HTTP/1.x response ("HTTP/1." so far). */
static int http_prefix(const char *buf, size_t len)
{
	static const char want[] = "HTTP/1.";

	return memcmp(buf, want, len < sizeof(want) - 1 ? len : sizeof(want) - 1) == 0;
}

/* --worker-from none: c's answer is complete (any status); counts it. */
static void answered_none(struct tally *t, struct pconn *c)
{
	t->replies++;
	t->statuses[c->fr.status - STATUS_MIN]++;
	if (!c->t_done) {
		c->t_done = now_ns();
		t->answered++;
	}
	c->state = c->fr.close ? C_DONE : C_OPEN;
	if (c->fr.close)
		conn_close(c);
}

/* --worker-from none: reads what the server sent on an asked connection
 * into the framer, keeping none of it. */
static void on_readable_none(struct tally *t, struct pconn *c)
{
	ssize_t n = read(c->fd, c->buf, sizeof(c->buf));

	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			record_error(t, c, E_RESET);
		return;
	}
	if (n == 0) {
		/* Closed: the end of a body that runs to the close, or before any
		 * byte of an answer (eof), or partway through one (bad_response). */
		if (resp_framer_eof(&c->fr))
			answered_none(t, c);
		else
			record_error(t, c, resp_framer_seen(&c->fr) ? E_BAD_RESPONSE : E_EOF);
		return;
	}
	if (resp_framer_seen(&c->fr) == 0)
		lat_first[nlat_first++] = (now_ns() - c->t_sent) / 1000;
	if (resp_framer_feed(&c->fr, c->buf, (size_t)n) < 0) {
		record_error(t, c, E_BAD_RESPONSE);
		return;
	}
	if (resp_framer_done(&c->fr))
		answered_none(t, c);
}

static void on_readable(struct tally *t, struct pconn *c)
{
	struct http_response r;
	char id[ID_LEN];
	struct wstat *w;
	ssize_t n;
	int rc;

	if (c->state != C_ASKING) {
		/* The server spoke (or closed) while we were not asking: an idle
		 * close (--tcp: a close while held; what it says is dropped). */
		n = read(c->fd, c->buf, sizeof(c->buf));
		if (n == 0 || (n < 0 && errno != EAGAIN))
			record_error(t, c, n == 0 ? E_EOF : E_RESET);
		return;
	}
	if (opt.no_worker) {
		on_readable_none(t, c);
		return;
	}
	n = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			record_error(t, c, E_RESET);
		return;
	}
	if (n == 0) {
		/* Closed: before any byte of an answer (eof), or partway through
		 * something that never became one (bad_response). */
		record_error(t, c, c->len ? E_BAD_RESPONSE : E_EOF);
		return;
	}
	if (c->len == 0)
		lat_first[nlat_first++] = (now_ns() - c->t_sent) / 1000;
	c->len += (size_t)n;
	if (!http_prefix(c->buf, c->len)) {
		/* Not the start of an HTTP/1.x response: say so now, not after
		 * waiting out --timeout-ms for a head that will never end. */
		record_error(t, c, E_BAD_RESPONSE);
		return;
	}
	rc = resp_parse(c->buf, c->len, opt.worker_header, &r);
	if (rc == RESP_PARTIAL && c->len < sizeof(c->buf))
		return;
	if (rc < 0 || r.status != 200) {
		record_error(t, c, E_BAD_RESPONSE);
		return;
	}
	if (opt.worker_header) {
		if (!r.header || r.header_len == 0 || r.header_len >= ID_LEN) {
			record_error(t, c, E_BAD_RESPONSE);
			return;
		}
		memcpy(id, r.header, r.header_len);
		id[r.header_len] = '\0';
	} else {
		size_t k = 0;
		while (k < r.body_len && k < ID_LEN - 1 && r.body[k] != '\n' && r.body[k] != '\r')
			k++;
		if (k == 0 || k == ID_LEN - 1) {
			record_error(t, c, E_BAD_RESPONSE);
			return;
		}
		memcpy(id, r.body, k);
		id[k] = '\0';
	}
	w = tally_worker(t, id);
	if (!w) {
		record_error(t, c, E_BAD_RESPONSE);
		return;
	}
	w->reqs++;
	if (!c->owner[0]) {
		snprintf(c->owner, ID_LEN, "%s", id);
		c->t_done = now_ns();
		w->conns++;
		t->answered++;
	} else if (strcmp(c->owner, id) != 0) {
		t->switched++;
	}
	c->state = r.close ? C_DONE : C_OPEN;
	if (r.close)
		conn_close(c);
}

static void dispatch(struct tally *t, const struct epoll_event *evs, int k)
{
	for (int i = 0; i < k; i++) {
		struct pconn *c = evs[i].data.ptr;
		if (c->state == C_CONNECTING)
			on_connected(t, c);
		else if (c->state != C_FAILED && c->state != C_DONE)
			on_readable(t, c);
	}
}

/* Runs the event loop until no connection is in state `busy`, or the
 * timeout passes (then those connections fail with `on_timeout`). */
static void drive(struct tally *t, struct pconn *cs, int n, enum cstate busy, enum err_kind on_timeout)
{
	int64_t deadline = now_ns() + (int64_t)opt.timeout_ms * 1000000;
	struct epoll_event evs[256];

	for (;;) {
		int waiting = 0, k;

		for (int i = 0; i < n; i++)
			waiting += cs[i].state == busy;
		if (!waiting)
			return;
		int64_t left = deadline - now_ns();
		if (left <= 0)
			break;
		k = epoll_wait(epfd, evs, 256, (int)(left / 1000000) + 1);
		dispatch(t, evs, k);
	}
	for (int i = 0; i < n; i++)
		if (cs[i].state == busy)
			record_error(t, &cs[i], on_timeout);
}

/* --tcp: runs the event loop for ms, so that a connection the server
 * closes or resets while it is held is counted (what it sends is dropped). */
static void drive_for(struct tally *t, int ms)
{
	int64_t deadline = now_ns() + (int64_t)ms * 1000000;
	struct epoll_event evs[256];

	for (;;) {
		int64_t left = deadline - now_ns();

		if (left <= 0)
			return;
		dispatch(t, evs, epoll_wait(epfd, evs, 256, (int)((left + 999999) / 1000000)));
	}
}

static void close_all(struct pconn *cs, int n)
{
	for (int i = 0; i < n; i++)
		conn_close(&cs[i]);
}

/* --pause-at: if this is the chosen point, says so on stdout with the
 * connections held open, and waits for a line on stdin (a driver samples
 * the server meanwhile). EOF or a read error means go on, now and at every
 * later hold, so a driver that went away cannot hang the probe. */
static void hold(int round, enum pause_at at)
{
	int open = 0;
	char ch;

	if (opt.pause_at != at)
		return;
	for (int i = 0; i < opt.connections; i++)
		open += conns[i].fd >= 0 && conns[i].state == C_OPEN;
	printf("{\"event\":\"held\",\"round\":%d,\"at\":\"%s\",\"open\":%d}\n", round, pause_names[at], open);
	fflush(stdout);
	while (!stdin_ended) {
		ssize_t k = read(STDIN_FILENO, &ch, 1);

		if (k == 1 && ch == '\n')
			return;
		if (k == 0 || (k < 0 && errno != EINTR))
			stdin_ended = 1;
	}
}

/* One round (number round) of the chosen shape, counted into t. Returns
 * the burst's issue span in us. */
static long run_round(struct tally *t, int round)
{
	int n = opt.connections;
	long span_us = -1;

	nlat_connect = nlat_first = 0;
	round_t0 = now_ns();
	if (opt.tcp) {
		/* burst or ramp: open them all, hold them, close them. */
		for (int i = 0; i < n; i++) {
			if (opt.shape == SHAPE_RAMP) {
				if (i)
					sleep_ms(opt.gap_ms);
				conn_start(t, &conns[i]);
				drive(t, &conns[i], 1, C_CONNECTING, E_CONNECT_TIMEOUT);
			} else {
				conn_start(t, &conns[i]);
			}
		}
		if (opt.shape == SHAPE_BURST) {
			span_us = (long)((now_ns() - round_t0) / 1000);
			drive(t, conns, n, C_CONNECTING, E_CONNECT_TIMEOUT);
		}
		hold(round, PAUSE_OPEN);
		drive_for(t, opt.hold_ms);
		for (int i = 0; i < n; i++)
			t->held += conns[i].fd >= 0 && conns[i].state == C_OPEN;
		close_all(conns, n);
		t->unanswered = n - t->held;
		return span_us;
	}
	if (opt.shape == SHAPE_BURST || opt.shape == SHAPE_KEEPALIVE) {
		for (int i = 0; i < n; i++)
			conn_start(t, &conns[i]);
		span_us = (long)((now_ns() - round_t0) / 1000);
		drive(t, conns, n, C_CONNECTING, E_CONNECT_TIMEOUT);
		hold(round, PAUSE_OPEN);
		for (int m = 0; m < (opt.shape == SHAPE_KEEPALIVE ? opt.requests : 1); m++) {
			if (m)
				sleep_ms(opt.gap_ms);
			for (int i = 0; i < n; i++)
				conn_ask(t, &conns[i]);
			drive(t, conns, n, C_ASKING, E_TIMEOUT);
			if (m == 0)
				hold(round, PAUSE_ASKED);
		}
		close_all(conns, n);
	} else if (opt.shape == SHAPE_RAMP) {
		for (int i = 0; i < n; i++) {
			if (i)
				sleep_ms(opt.gap_ms);
			conn_start(t, &conns[i]);
			drive(t, &conns[i], 1, C_CONNECTING, E_CONNECT_TIMEOUT);
		}
		hold(round, PAUSE_OPEN);
		for (int i = 0; i < n; i++)
			conn_ask(t, &conns[i]);
		drive(t, conns, n, C_ASKING, E_TIMEOUT);
		hold(round, PAUSE_ASKED);
		close_all(conns, n);
	} else {
		for (int i = 0; i < n; i++) {
			if (i)
				sleep_ms(opt.gap_ms);
			conn_start(t, &conns[i]);
			drive(t, &conns[i], 1, C_CONNECTING, E_CONNECT_TIMEOUT);
			conn_ask(t, &conns[i]);
			drive(t, &conns[i], 1, C_ASKING, E_TIMEOUT);
			conn_close(&conns[i]);
		}
	}
	t->unanswered = n - t->answered;
	return span_us;
}

static int cmp_conns_desc(const void *a, const void *b)
{
	const struct wstat *x = a, *y = b;
	if (x->conns != y->conns)
		return (y->conns > x->conns) - (y->conns < x->conns);
	return strcmp(x->id, y->id);
}

/* Sorts t's workers largest first and writes "17/15" (field conns or reqs). */
static void format_split(struct tally *t, int reqs, char *buf, size_t len)
{
	size_t off = 0;
	long v[MAX_WORKERS];

	for (int i = 0; i < t->n; i++)
		v[i] = reqs ? t->w[i].reqs : t->w[i].conns;
	for (int i = 1; i < t->n; i++) /* insertion sort, descending */
		for (int j = i; j > 0 && v[j] > v[j - 1]; j--) {
			long tmp = v[j];
			v[j] = v[j - 1];
			v[j - 1] = tmp;
		}
	buf[0] = '\0';
	for (int i = 0; i < t->n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%ld", i ? "/" : "", v[i]);
	if (t->n == 0)
		snprintf(buf, len, "0");
}

/* max/min over the workers; returns -1 for infinite (a worker got none). */
static double ratio_of(const struct tally *t, int *starved)
{
	long mx = 0, mn = -1;

	*starved = 0;
	for (int i = 0; i < t->n; i++) {
		long c = t->w[i].conns;
		if (c == 0)
			(*starved)++;
		if (c > mx)
			mx = c;
		if (mn < 0 || c < mn)
			mn = c;
	}
	if (t->n == 0 || mn <= 0)
		return -1;
	return (double)mx / (double)mn;
}

static void json_counts(FILE *f, const char *key, const struct tally *t, int reqs)
{
	fprintf(f, "\"%s\":{", key);
	for (int i = 0; i < t->n; i++)
		fprintf(f, "%s\"%s\":%ld", i ? "," : "", t->w[i].id, reqs ? t->w[i].reqs : t->w[i].conns);
	fprintf(f, "}");
}

static void json_errors(FILE *f, const struct tally *t)
{
	fprintf(f, "\"errors\":{");
	for (int k = 0; k < E_KINDS; k++)
		fprintf(f, "%s\"%s\":%ld", k ? "," : "", err_names[k], t->errors[k]);
	fprintf(f, "}");
}

static void human_errors(const struct tally *t, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	if (!t->unanswered)
		return;
	off += (size_t)snprintf(buf, len, " (%ld %s:", t->unanswered, opt.tcp ? "failed" : "unanswered");
	for (int k = 0; k < E_KINDS && off < len; k++)
		if (t->errors[k])
			off += (size_t)snprintf(buf + off, len - off, " %ld %s", t->errors[k], err_names[k]);
	if (off < len)
		snprintf(buf + off, len - off, ")");
}

/* What each error kind means, for the one-line diagnosis. */
static const char *const err_hints[] = {
	"nothing is listening there",
	"the handshake did not complete within --timeout-ms",
	"the server reset the connection",
	"the server closed the connection without answering",
	"no complete answer within --timeout-ms",
	"the answer was cut short, or not an HTTP/1.x response with Content-Length and a worker id",
	"sending the request failed",
	"a local error (socket or file descriptors)",
};

/* Where --worker-from none and --tcp mean another thing by a kind. */
static const char *err_hint(int k)
{
	if (opt.tcp && k == E_EOF)
		return "the server closed the connection while it was held";
	if (opt.no_worker && k == E_BAD_RESPONSE)
		return "the answer was cut short, or not an HTTP/1.x response";
	return err_hints[k];
}

/* After the runs: if any connection went unanswered (--tcp: failed), one
 * line on stderr saying how many, of what kind, and what that kind means. */
static void diagnose(const struct tally *t)
{
	long attempted = (opt.tcp ? t->held : t->answered) + t->unanswered;
	char line[1024];
	size_t off;
	int worst = -1, kinds = 0;

	if (!t->unanswered)
		return;
	for (int k = 0; k < E_KINDS; k++)
		if (t->errors[k] && (kinds++, worst < 0 || t->errors[k] > t->errors[worst]))
			worst = k;
	off = (size_t)snprintf(line, sizeof(line), PROG ": %ld of %ld connections to %s %s:", t->unanswered,
			       attempted, opt.target_str, opt.tcp ? "failed" : "unanswered");
	for (int k = 0; k < E_KINDS && off < sizeof(line); k++)
		if (t->errors[k])
			off += (size_t)snprintf(line + off, sizeof(line) - off, " %ld %s,", t->errors[k], err_names[k]);
	if (worst >= 0 && off < sizeof(line))
		snprintf(line + off - 1, sizeof(line) - off + 1, kinds > 1 ? " (mostly %s: %s)" : " (%.0s%s)",
			 err_names[worst], err_hint(worst));
	fprintf(stderr, "%s\n", line);
}

static void shape_label(char *buf, size_t len)
{
	if (opt.shape == SHAPE_KEEPALIVE)
		snprintf(buf, len, "keepalive %dx%d", opt.connections, opt.requests);
	else
		snprintf(buf, len, "%s %d", shape_names[opt.shape], opt.connections);
}

/* Prints one round (or, with summary set, the total over rounds). */
static void report(struct tally *t, int round, int summary, int rounds_every, long span_us,
		   double worst_ratio, int worst_inf)
{
	FILE *human = opt.json ? stderr : stdout;
	char split[2048], rsplit[2048], errs[256], label[64], stopped[64] = "";
	pid_t stopped_pid = stop_winner_pid();
	int starved;
	double ratio;

	qsort(t->w, (size_t)t->n, sizeof(t->w[0]), cmp_conns_desc);
	format_split(t, 0, split, sizeof(split));
	format_split(t, 1, rsplit, sizeof(rsplit));
	human_errors(t, errs, sizeof(errs));
	shape_label(label, sizeof(label));
	ratio = ratio_of(t, &starved);
	if (stopped_pid)
		snprintf(stopped, sizeof(stopped), " [worker %d stopped]", (int)stopped_pid);

	if (summary)
		fprintf(human, "total %s x%d%s: %s, every worker answered in %d of %d rounds%s\n", label,
			opt.rounds, stopped, split, rounds_every, opt.rounds, errs);
	else if (opt.shape == SHAPE_KEEPALIVE)
		fprintf(human, "%s%s: %s (requests %s%s%s)%s\n", label, stopped, split, rsplit,
			t->switched ? ", switched " : "", t->switched ? "yes" : "", errs);
	else
		fprintf(human, "%s%s: %s%s\n", label, stopped, split, errs);
	fflush(human);
	if (!opt.json)
		return;

	printf("{\"type\":\"%s\",\"shape\":\"%s\",\"connections\":%d,", summary ? "summary" : "round",
	       shape_names[opt.shape], opt.connections);
	if (summary)
		printf("\"rounds\":%d,\"rounds_every_worker\":%d,", opt.rounds, rounds_every);
	else
		printf("\"round\":%d,", round);
	if (stopped_pid)
		printf("\"stopped\":%d,", (int)stopped_pid);
	else
		printf("\"stopped\":null,");
	printf("\"answered\":%ld,\"unanswered\":%ld,", t->answered, t->unanswered);
	json_counts(stdout, "counts", t, 0);
	printf(",\"split\":\"%s\",\"shares\":{", split);
	for (int i = 0; i < t->n; i++)
		printf("%s\"%s\":%.4f", i ? "," : "", t->w[i].id,
		       t->answered ? (double)t->w[i].conns / (double)t->answered : 0.0);
	printf("},");
	if (ratio < 0)
		printf("\"ratio\":null,");
	else
		printf("\"ratio\":%.3f,", ratio);
	printf("\"starved\":%d,", starved);
	if (summary) {
		if (worst_inf)
			printf("\"worst_ratio\":null,");
		else
			printf("\"worst_ratio\":%.3f,", worst_ratio);
	}
	if (opt.shape == SHAPE_KEEPALIVE) {
		json_counts(stdout, "requests", t, 1);
		printf(",\"requests_split\":\"%s\",\"switched\":%ld,", rsplit, t->switched);
	}
	if (!summary) {
		if (span_us >= 0)
			printf("\"issue_span_us\":%ld,", span_us);
		printf("\"connect_us\":{\"p50\":%lld,\"p99\":%lld},",
		       percentile(lat_connect, nlat_connect, 50), percentile(lat_connect, nlat_connect, 99));
		printf("\"first_byte_us\":{\"p50\":%lld,\"p99\":%lld},",
		       percentile(lat_first, nlat_first, 50), percentile(lat_first, nlat_first, 99));
		if (opt.latencies) {
			struct conn_time *ct = calloc((size_t)opt.connections, sizeof(*ct));
			for (int i = 0; ct && i < opt.connections; i++)
				ct[i] = (struct conn_time){ conns[i].t_start, conns[i].t_done, conns[i].owner };
			if (ct)
				json_latencies(stdout, round_t0, ct, opt.connections);
			free(ct);
		}
	}
	json_errors(stdout, t);
	printf("}\n");
	fflush(stdout);
}

/* --worker-from none and --tcp: prints one round (or, with summary set,
 * the total over rounds) without workers: answers by status, or with --tcp
 * the connections opened and held. */
static void report_none(struct tally *t, int round, int summary, long span_us)
{
	FILE *human = opt.json ? stderr : stdout;
	char errs[256], label[64], statuses[512] = "";
	size_t off = 0;
	long not_200 = 0;

	human_errors(t, errs, sizeof(errs));
	shape_label(label, sizeof(label));
	for (int s = 0; s < STATUS_SLOTS; s++)
		if (s + STATUS_MIN != 200)
			not_200 += t->statuses[s];
	for (int s = 0; not_200 && s < STATUS_SLOTS && off < sizeof(statuses); s++)
		if (t->statuses[s])
			off += (size_t)snprintf(statuses + off, sizeof(statuses) - off, "%s%d x%ld", off ? " " : ", status ",
						 s + STATUS_MIN, t->statuses[s]);
	if (summary)
		fprintf(human, "total %s x%d: ", label, opt.rounds);
	else
		fprintf(human, "%s: ", label);
	if (opt.tcp) {
		fprintf(human, "%ld opened", t->opened);
		if (t->held != t->opened)
			fprintf(human, ", %ld held", t->held);
		fprintf(human, "%s\n", errs);
	} else if (opt.shape == SHAPE_KEEPALIVE) {
		fprintf(human, "%ld answered (requests %ld)%s%s\n", t->answered, t->replies, statuses, errs);
	} else {
		fprintf(human, "%ld answered%s%s\n", t->answered, statuses, errs);
	}
	fflush(human);
	if (!opt.json)
		return;

	printf("{\"type\":\"%s\",\"shape\":\"%s\",\"connections\":%d,", summary ? "summary" : "round",
	       shape_names[opt.shape], opt.connections);
	if (summary)
		printf("\"rounds\":%d,", opt.rounds);
	else
		printf("\"round\":%d,", round);
	printf("\"worker_from\":\"none\",");
	if (opt.tcp) {
		printf("\"tcp\":true,\"hold_ms\":%d,\"opened\":%ld,\"held\":%ld,\"failed\":%ld,", opt.hold_ms,
		       t->opened, t->held, t->unanswered);
	} else {
		printf("\"answered\":%ld,\"unanswered\":%ld,", t->answered, t->unanswered);
		if (opt.shape == SHAPE_KEEPALIVE)
			printf("\"replies\":%ld,", t->replies);
		printf("\"statuses\":{");
		for (int s = 0, first = 1; s < STATUS_SLOTS; s++)
			if (t->statuses[s]) {
				printf("%s\"%d\":%ld", first ? "" : ",", s + STATUS_MIN, t->statuses[s]);
				first = 0;
			}
		printf("},");
	}
	if (!summary) {
		if (span_us >= 0)
			printf("\"issue_span_us\":%ld,", span_us);
		printf("\"connect_us\":{\"p50\":%lld,\"p99\":%lld},",
		       percentile(lat_connect, nlat_connect, 50), percentile(lat_connect, nlat_connect, 99));
		if (!opt.tcp)
			printf("\"first_byte_us\":{\"p50\":%lld,\"p99\":%lld},",
			       percentile(lat_first, nlat_first, 50), percentile(lat_first, nlat_first, 99));
		if (opt.latencies) {
			struct conn_time *ct = calloc((size_t)opt.connections, sizeof(*ct));
			for (int i = 0; ct && i < opt.connections; i++)
				ct[i] = (struct conn_time){ conns[i].t_start, conns[i].t_done, NULL };
			if (ct)
				json_latencies(stdout, round_t0, ct, opt.connections);
			free(ct);
		}
	}
	json_errors(stdout, t);
	printf("}\n");
	fflush(stdout);
}

/* Runs every round; returns 0, or 1 if a connection went unanswered or
 * --max-ratio was exceeded. total collects the sum over rounds. */
static int run_rounds(const struct tally *known, struct tally *total)
{
	int failed = 0, rounds_every = 0, worst_inf = 0;
	int *answering = calloc((size_t)opt.rounds + 1, sizeof(int));
	double worst = 0;

	*total = *known;
	for (int r = 1; r <= opt.rounds; r++) {
		struct tally t = *known;
		long span;
		int starved;
		double ratio;

		if (r > 1)
			sleep_ms(opt.round_gap_ms);
		span = run_round(&t, r);
		ratio = ratio_of(&t, &starved);
		if (!starved && t.n > 0)
			rounds_every++;
		for (int i = 0; i < t.n && answering; i++)
			answering[r] += t.w[i].conns > 0;
		if (ratio < 0)
			worst_inf = 1;
		else if (ratio > worst)
			worst = ratio;
		if (t.unanswered)
			failed = 1;
		if (opt.max_ratio > 0 && (ratio < 0 || ratio > opt.max_ratio))
			failed = 1;
		for (int i = 0; i < t.n; i++) {
			struct wstat *w = tally_worker(total, t.w[i].id);
			if (w) {
				w->conns += t.w[i].conns;
				w->reqs += t.w[i].reqs;
			}
		}
		for (int k = 0; k < E_KINDS; k++)
			total->errors[k] += t.errors[k];
		total->answered += t.answered;
		total->unanswered += t.unanswered;
		total->switched += t.switched;
		total->replies += t.replies;
		total->opened += t.opened;
		total->held += t.held;
		for (int s = 0; s < STATUS_SLOTS; s++)
			total->statuses[s] += t.statuses[s];
		if (opt.no_worker)
			report_none(&t, r, 0, span);
		else
			report(&t, r, 0, 0, span, 0, 0);
	}
	if (known->n == 0 && answering) {
		/* No ready line: the workers are those that answered in any
		 * round, so a round answered by fewer of them is not "every". */
		rounds_every = 0;
		for (int r = 1; r <= opt.rounds; r++)
			rounds_every += answering[r] > 0 && answering[r] == total->n;
	}
	free(answering);
	if (opt.no_worker)
		report_none(total, 0, 1, -1);
	else
		report(total, 0, 1, rounds_every, -1, worst, worst_inf);
	return failed;
}

/* --stop-winner: SIGSTOPs the worker that answered most, runs every round
 * again, judges the rerun and SIGCONTs it. Returns 0, or 1 on a failure. */
static int stop_winner_and_rerun(const struct tally *known, struct tally *total)
{
	char msg[STOP_WINNER_MSG_LEN];
	struct tally again;
	int failed;

	if (stop_winner_stop(total, msg, sizeof(msg)) < 0) {
		fprintf(stderr, PROG ": --stop-winner: %s\n", msg);
		return 1;
	}
	failed = run_rounds(known, &again);
	if (stop_winner_verdict(&again, msg, sizeof(msg))) {
		for (char *line = msg, *nl; (nl = strchr(line, '\n')); line = nl + 1)
			fprintf(stderr, PROG ": --stop-winner: %.*s\n", (int)(nl - line), line);
		failed = 1;
	}
	stop_winner_continue();
	return failed;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, 't' },
		{ "shape", required_argument, NULL, 's' },
		{ "connections", required_argument, NULL, 'n' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "gap-ms", required_argument, NULL, 'g' },
		{ "requests", required_argument, NULL, 'm' },
		{ "pin", required_argument, NULL, 'c' },
		{ "path", required_argument, NULL, 'p' },
		{ "worker-from", required_argument, NULL, 'w' },
		{ "max-ratio", required_argument, NULL, 'x' },
		{ "stop-winner", no_argument, NULL, 'S' },
		{ "workers-from", required_argument, NULL, 'W' },
		{ "expect-workers", required_argument, NULL, 'e' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "round-gap-ms", required_argument, NULL, 'G' },
		{ "json", no_argument, NULL, 'j' },
		{ "latencies", no_argument, NULL, 'L' },
		{ "pause-at", required_argument, NULL, 'P' },
		{ "tcp", no_argument, NULL, 'K' },
		{ "hold-ms", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, shape_set = 0, failed;
	int conns_set = -1, rounds_set = -1, gap_set = -1, hold_set = 0, path_set = 0;
	const char *worker_from = NULL; /* as given, for --tcp's complaint */
	struct tally known, total;
	struct rlimit rl;

	memset(&known, 0, sizeof(known));
	opt.requests = 4;
	opt.pin = -1;
	opt.path = "/pid";
	opt.timeout_ms = 5000;
	opt.round_gap_ms = 100;
	opt.hold_ms = 1000;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 't': parse_target(optarg); break;
		case 's':
			for (shape_set = 0; shape_set < 4 && strcmp(optarg, shape_names[shape_set]); shape_set++)
				;
			if (shape_set == 4)
				bad_arg("--shape %s: expected burst, ramp, keepalive or oneshot", optarg);
			opt.shape = (enum shape)shape_set;
			shape_set = 1;
			break;
		case 'n': conns_set = (int)parse_long("--connections", optarg, 1, MAX_CONNECTIONS); break;
		case 'r': rounds_set = (int)parse_long("--rounds", optarg, 1, 100000); break;
		case 'g': gap_set = (int)parse_long("--gap-ms", optarg, 0, 600000); break;
		case 'm': opt.requests = (int)parse_long("--requests", optarg, 1, 100000); break;
		case 'c': opt.pin = (int)parse_long("--pin", optarg, 0, CPU_SETSIZE - 1); break;
		case 'p':
			if (optarg[0] != '/' || strlen(optarg) > PATH_MAX_LEN)
				bad_arg("--path %.64s: expected an absolute path (/...) of at most %d bytes", optarg,
					PATH_MAX_LEN);
			for (const char *q = optarg; *q; q++)
				if ((unsigned char)*q <= ' ' || *q == 0x7f)
					bad_arg("--path %.64s: expected an absolute path without spaces or control characters",
						optarg);
			opt.path = optarg;
			path_set = 1;
			break;
		case 'w':
			worker_from = optarg;
			opt.no_worker = 0;
			if (strcmp(optarg, "body") == 0)
				opt.worker_header = NULL;
			else if (strncmp(optarg, "header:", 7) == 0 && optarg[7])
				opt.worker_header = optarg + 7;
			else if (strcmp(optarg, "none") == 0)
				opt.worker_header = NULL, opt.no_worker = 1;
			else
				bad_arg("--worker-from %s: expected body, header:NAME or none", optarg);
			break;
		case 'K': opt.tcp = 1; break;
		case 'H':
			opt.hold_ms = (int)parse_long("--hold-ms", optarg, 0, 3600000);
			hold_set = 1;
			break;
		case 'x': {
			char *end;
			opt.max_ratio = strtod(optarg, &end);
			if (!*optarg || *end || !(opt.max_ratio >= 1.0))
				bad_arg("--max-ratio %s: expected a number >= 1", optarg);
			break;
		}
		case 'S': opt.stop_winner = 1; break;
		case 'W': opt.workers_from = optarg; break;
		case 'e': opt.expect_workers = (int)parse_long("--expect-workers", optarg, 1, MAX_WORKERS); break;
		case 'T': opt.timeout_ms = (int)parse_long("--timeout-ms", optarg, 1, 3600000); break;
		case 'G': opt.round_gap_ms = (int)parse_long("--round-gap-ms", optarg, 0, 600000); break;
		case 'j': opt.json = 1; break;
		case 'L': opt.latencies = 1; break;
		case 'P':
			if (strcmp(optarg, "open") == 0)
				opt.pause_at = PAUSE_OPEN;
			else if (strcmp(optarg, "asked") == 0)
				opt.pause_at = PAUSE_ASKED;
			else
				bad_arg("--pause-at %s: expected open or asked", optarg);
			break;
		case 'h': usage(stdout); return 0;
		case ':': bad_arg("%s: needs a value", argv[optind - 1]); break;
		default: bad_arg("%s: unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		bad_arg("%s: unexpected argument", argv[optind]);
	if (!opt.target_str)
		bad_arg("--target: required");
	if (!shape_set)
		bad_arg("--shape: required");
	if (opt.latencies && (opt.shape != SHAPE_BURST || !opt.json))
		bad_arg("--latencies: only with --shape burst and --json");
	if (opt.pause_at != PAUSE_NONE && opt.shape == SHAPE_ONESHOT)
		bad_arg("--pause-at: not with --shape oneshot (it never holds its connections)");
	if (opt.pause_at != PAUSE_NONE && opt.latencies)
		bad_arg("--pause-at: not with --latencies (the hold would be inside the latencies)");
	if (opt.tcp) {
		if (opt.shape == SHAPE_KEEPALIVE || opt.shape == SHAPE_ONESHOT)
			bad_arg("--tcp: not with --shape %s (--tcp holds connections without asking: burst or ramp)",
				shape_names[opt.shape]);
		if (worker_from && strcmp(worker_from, "none") != 0)
			bad_arg("--worker-from %s: not with --tcp (nothing is asked, so no worker is named)", worker_from);
		if (path_set)
			bad_arg("--path: not with --tcp (no request is sent)");
		if (opt.latencies)
			bad_arg("--latencies: not with --tcp (nothing is answered)");
		if (opt.pause_at == PAUSE_ASKED)
			bad_arg("--pause-at asked: not with --tcp (nothing is asked; open holds the open connections)");
		opt.no_worker = 1;
	} else if (hold_set) {
		bad_arg("--hold-ms: only with --tcp");
	}
	if (opt.no_worker) {
		const char *why = opt.tcp ? "--tcp" : "--worker-from none";

		if (opt.max_ratio > 0)
			bad_arg("--max-ratio: not with %s (no worker is attributed)", why);
		if (opt.stop_winner)
			bad_arg("--stop-winner: not with %s (no worker is attributed)", why);
		if (opt.workers_from)
			bad_arg("--workers-from: not with %s (no worker is attributed)", why);
		if (opt.expect_workers)
			bad_arg("--expect-workers: not with %s (no worker is attributed)", why);
	}
	opt.connections = conns_set > 0 ? conns_set : opt.shape == SHAPE_ONESHOT ? 8 : 32;
	opt.rounds = rounds_set > 0 ? rounds_set : opt.shape == SHAPE_ONESHOT ? 10 : 1;
	opt.gap_ms = gap_set >= 0 ? gap_set : opt.shape == SHAPE_ONESHOT ? 5 : opt.shape == SHAPE_BURST ? 0 : 10;
	/* Worker ids are read before --worker-from may appear, so load afterwards. */
	if (opt.workers_from)
		load_workers(opt.workers_from, &known);
	else if (opt.expect_workers == 0 && opt.max_ratio > 0)
		bad_arg("--max-ratio: needs --workers-from or --expect-workers to know who got none");
	if (opt.stop_winner && !opt.workers_from)
		bad_arg("--stop-winner: needs --workers-from FILE (the server's ready line) for the pids");
	if (opt.expect_workers && opt.workers_from && known.n != opt.expect_workers)
		bad_arg("--expect-workers %d: the ready line lists %d workers", opt.expect_workers, known.n);

	if (opt.pin >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(opt.pin, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			bad_arg("--pin %d: %s", opt.pin, strerror(errno));
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)opt.connections + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_fatal_signal);
	signal(SIGTERM, on_fatal_signal);

	epfd = epoll_create1(EPOLL_CLOEXEC);
	conns = calloc((size_t)opt.connections, sizeof(*conns));
	lat_connect = calloc((size_t)opt.connections * (size_t)opt.requests, sizeof(int64_t));
	lat_first = calloc((size_t)opt.connections * (size_t)opt.requests, sizeof(int64_t));
	if (epfd < 0 || !conns || !lat_connect || !lat_first) {
		fprintf(stderr, PROG ": out of memory or fds\n");
		return 1;
	}
	for (int i = 0; i < opt.connections; i++)
		conns[i].fd = -1;

	failed = run_rounds(&known, &total);
	diagnose(&total);
	if (opt.stop_winner)
		failed |= stop_winner_and_rerun(&known, &total);
	return failed;
}
