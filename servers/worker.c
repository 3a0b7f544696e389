/* worker.c: one worker's event loop and its connections: reads, the
 * requests they carry (answered by app.c), writes, timeouts and the stop.
 * Variants reach it through server.h's hooks and the accept path's helpers
 * (accept.c); how connections are registered with epoll is the connection
 * set's (conn.h: a worker's own epoll here, or shared_epoll.c). */
#include "conn.h"
#include "app.h"
#include "net.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define OUT_HIGH_WATER (256 * 1024)   /* stop parsing pipelined requests above this */
#define MAX_BODY (1 << 20)            /* request bodies are read and discarded */
#define SWEEP_INTERVAL_MS 1000
#define STOP_DRAIN_MS 5000            /* after SIGTERM, in-flight requests get this long */
/* A worker retiring for a reload keeps each idle keep-alive connection until
 * its next request, which it answers with Connection: close, so a client
 * that sends on it never finds it closed under its request. One idle this
 * long is closed instead (its client has stopped sending; closing an idle
 * connection is what the idle timeout does anyway). The sweep runs this
 * often while retiring. */
#define RETIRE_IDLE_MS 1000
#define RETIRE_SWEEP_MS 100

/* Set by the stop signal: SIGTERM from the supervisor in process mode,
 * SIGUSR1 from the main thread (pthread_kill, one per thread) in threads
 * mode. Either way it is unblocked only inside epoll_pwait. */
static volatile sig_atomic_t stop_requested;
/* Set by RETIRE_SIGNAL (process mode): the supervisor's reload replaces this
 * worker; stop taking connections and let the open ones finish gently. */
static volatile sig_atomic_t retire_requested;

static void on_stop_signal(int sig)
{
	if (sig == RETIRE_SIGNAL)
		retire_requested = 1;
	else
		stop_requested = 1;
}

static void touch(const struct worker *w, struct conn *c)
{
	__atomic_store_n(&c->last_active_ns, w->clock_ns, __ATOMIC_RELAXED);
}

static int64_t idle_ns(struct conn *c, int64_t now)
{
	return now - __atomic_load_n(&c->last_active_ns, __ATOMIC_RELAXED);
}

int conn_expired(const struct worker *w, struct conn *c, int64_t now)
{
	int64_t head = __atomic_load_n(&c->head_started_ns, __ATOMIC_RELAXED);

	return idle_ns(c, now) > (int64_t)w->srv->cfg.idle_timeout_s * 1000000000 ||
	       (head && now - head > (int64_t)w->srv->cfg.header_timeout_s * 1000000000);
}

/* A closed connection's memory is kept for the next one (up to
 * SPARE_CONNS per worker), its output buffer with it: a server under
 * Connection: close load admits and closes one per request. Not under
 * AddressSanitizer, which should see every use after free. */
#define SPARE_CONNS 64
#if defined(__SANITIZE_ADDRESS__)
#define KEEP_SPARES 0
#else
#define KEEP_SPARES 1
#endif

static void conn_free(struct worker *w, struct conn *c)
{
	if (KEEP_SPARES && w->nspare < SPARE_CONNS) {
		c->next_spare = w->spare;
		w->spare = c;
		w->nspare++;
		return;
	}
	free(c->out);
	free(c);
}

/* A connection's memory, zeroed but for its input buffer (most of its
 * size; nothing reads it past inlen) and a spare's output buffer. */
static struct conn *conn_alloc(struct worker *w)
{
	struct conn *c = w->spare;
	char *out = NULL;
	size_t outcap = 0;

	if (c) {
		w->spare = c->next_spare;
		w->nspare--;
		out = c->out;
		outcap = c->outcap;
	} else if (!(c = malloc(sizeof(*c)))) {
		return NULL;
	}
	memset(c, 0, offsetof(struct conn, in));
	c->out = out;
	c->outcap = outcap;
	return c;
}

static void conn_close(struct worker *w, struct conn *c)
{
	conn_set_of(w)->drop(w, c);
	w->open_conns--;
	conn_free(w, c);
	if (w->srv->cfg.variant->conn_closed)
		w->srv->cfg.variant->conn_closed(w);
}

/* Room for len more bytes in c->out: 0, or -1 (out of memory). */
static int out_reserve(struct conn *c, size_t len)
{
	if (c->outlen + len > c->outcap) {
		size_t cap = c->outcap ? c->outcap : 1024;
		char *n;

		while (cap < c->outlen + len)
			cap *= 2;
		n = realloc(c->out, cap);
		if (!n)
			return -1;
		c->out = n;
		c->outcap = cap;
	}
	return 0;
}

/* Appends s[0..n) to the room out_reserve made. */
static char *put(char *at, const char *s, size_t n)
{
	memcpy(at, s, n);
	return at + n;
}

/* Appends v in decimal. */
static char *put_u64(char *at, uint64_t v)
{
	char digits[20];
	int nd = 0;

	do
		digits[nd++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (nd)
		*at++ = digits[--nd];
	return at;
}

#define PUT_LIT(at, lit) put(at, lit, sizeof(lit) - 1)
/* The head's fixed text and the widest of its fields (status and reason,
 * two decimals, the Connection value). */
#define HEAD_MAX 256

/* Queues one answer: its head (written piece by piece, not through printf:
 * this runs once per request) and its body, in one buffer so that one
 * send carries both. */
static void respond(struct worker *w, struct conn *c, int status, const char *body,
		    size_t body_len, int keep_alive)
{
	const char *reason = http_reason(status);
	char *at;

	if (out_reserve(c, HEAD_MAX + body_len) < 0) {
		c->close_after_write = 1; /* out of memory: what is queued is sent, then the connection closes */
		return;
	}
	at = c->out + c->outlen;
	at = PUT_LIT(at, "HTTP/1.1 ");
	at = put_u64(at, (uint64_t)status);
	*at++ = ' ';
	at = put(at, reason, strlen(reason));
	at = PUT_LIT(at, "\r\nContent-Type: text/plain\r\nContent-Length: ");
	at = put_u64(at, body_len);
	at = PUT_LIT(at, "\r\nX-Worker: ");
	at = put_u64(at, (uint64_t)w->index);
	at = keep_alive ? PUT_LIT(at, "\r\nConnection: keep-alive\r\n\r\n")
			: PUT_LIT(at, "\r\nConnection: close\r\n\r\n");
	at = put(at, body, body_len);
	c->outlen = (size_t)(at - c->out);
	if (!keep_alive)
		c->close_after_write = 1;
}

/* Answers one parsed request (app.c). */
static void route_request(struct worker *w, struct conn *c, const struct http_request *r)
{
	char body[APP_BODY_MAX];
	size_t n;
	int status, waited, ka = r->keep_alive && !w->stopping;

	w->requests++;
	status = app_route(w, r, body, sizeof(body), &n, &waited);
	if (waited)
		w->clock_ns = now_ns();
	respond(w, c, status, body, n, ka);
}

/* Answers one parsed request, keeping the worker's handler clock (for the
 * variant's busy rule) while it runs. */
static void route(struct worker *w, struct conn *c, const struct http_request *r)
{
	struct handler_clock *hc = w->handler_clock;
	int64_t since, end;

	if (!hc) {
		route_request(w, c, r);
		return;
	}
	since = now_ns();
	__atomic_store_n(&hc->since, since, __ATOMIC_RELAXED);
	route_request(w, c, r);
	end = now_ns();
	w->clock_ns = end;
	__atomic_store_n(&hc->since, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&hc->last_ns, end - since, __ATOMIC_RELAXED);
	if (__atomic_load_n(&hc->judged, __ATOMIC_RELAXED) == since)
		__atomic_store_n(&hc->slow_until, end + (end - since), __ATOMIC_RELAXED);
}

/* Parses and answers every complete request in c->in (pipelining). */
static void conn_process(struct worker *w, struct conn *c)
{
	size_t off = 0;
	int partial = 0; /* stopped at an incomplete request head */

	while (!c->close_after_write && c->outlen - c->outoff < OUT_HIGH_WATER) {
		struct http_request req;
		int rc;

		if (c->body_left) {
			size_t take = c->inlen - off < c->body_left ? c->inlen - off : (size_t)c->body_left;
			off += take;
			c->body_left -= take;
			if (c->body_left)
				break;
		}
		if (off == c->inlen)
			break;
		rc = http_parse_request(c->in + off, c->inlen - off, &req);
		if (rc == HTTP_PARTIAL) {
			partial = 1;
			break;
		}
		if (rc == HTTP_MALFORMED || rc == HTTP_TOO_LARGE) {
			static const char bad[] = "malformed request\n", big[] = "request head over 8 KiB\n";
			w->requests++;
			if (rc == HTTP_MALFORMED)
				respond(w, c, 400, bad, sizeof(bad) - 1, 0);
			else
				respond(w, c, 431, big, sizeof(big) - 1, 0);
			off = c->inlen;
			break;
		}
		off += (size_t)rc;
		if (req.content_length > MAX_BODY) {
			static const char big[] = "request body over 1 MiB\n";
			w->requests++;
			respond(w, c, 413, big, sizeof(big) - 1, 0);
			off = c->inlen;
			break;
		}
		c->body_left = req.content_length;
		route(w, c, &req);
	}
	if (off) {
		memmove(c->in, c->in + off, c->inlen - off);
		c->inlen -= off;
	}
	/* The header timeout: a head that is still incomplete keeps the time
	 * of its first byte (approximately: of the read that brought it); one
	 * that follows a request parsed just now started now. */
	if (!partial)
		__atomic_store_n(&c->head_started_ns, 0, __ATOMIC_RELAXED);
	else if (off || !__atomic_load_n(&c->head_started_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&c->head_started_ns, now_ns(), __ATOMIC_RELAXED);
}

static void conn_set_writing(struct worker *w, struct conn *c, int on)
{
	if (c->writing == on)
		return;
	c->writing = on;
	conn_set_of(w)->set_writing(w, c);
}

/* Writes what is buffered. Returns -1 if the connection was closed. */
static int conn_flush(struct worker *w, struct conn *c)
{
	/* Nagle's algorithm would hold a keep-alive connection's next answer
	 * until the client acknowledges this one: off before the first answer
	 * that keeps the connection open (as nginx does on its way to
	 * keep-alive). An answer that closes the connection is its last, sent
	 * whole, and needs no such call. */
	if (!c->nodelay && !c->close_after_write) {
		int one = 1;

		setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->nodelay = 1;
	}
	while (c->outoff < c->outlen) {
		/* MSG_NOSIGNAL: a peer that reset must not raise SIGPIPE, which
		 * would kill the worker (and in threads mode the server). */
		ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				conn_set_writing(w, c, 1);
				return 0;
			}
			conn_close(w, c);
			return -1;
		}
		c->outoff += (size_t)n;
		touch(w, c);
	}
	c->outoff = c->outlen = 0;
	if (c->close_after_write || c->peer_closed) {
		conn_close(w, c);
		return -1;
	}
	conn_set_writing(w, c, 0);
	return 0;
}

/* Returns -1 if the connection was closed, else 0 (also for the next two).
 * A read that fills less than the room it was given has taken everything
 * the socket held, so it is the last: no second read to hear EAGAIN (the
 * connection's registration is level-triggered, or re-armed as such, so
 * what arrives next is reported again). */
static int conn_readable(struct worker *w, struct conn *c)
{
	for (;;) {
		ssize_t n;
		size_t room;

		if (c->inlen == IN_CAP) {
			/* Full: either a head over the limit (the parser says 431)
			 * or pipelined requests waiting for output to drain. */
			conn_process(w, c);
			if (c->inlen == IN_CAP || c->outlen)
				break;
		}
		room = IN_CAP - c->inlen;
		n = read(c->fd, c->in + c->inlen, room);
		if (n > 0) {
			c->inlen += (size_t)n;
			touch(w, c);
			if ((size_t)n < room)
				break;
			continue;
		}
		if (n == 0) {
			c->peer_closed = 1;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			break;
		conn_close(w, c); /* reset by the peer */
		return -1;
	}
	conn_process(w, c);
	if (c->outlen)
		return conn_flush(w, c);
	if (c->peer_closed || c->close_after_write) {
		conn_close(w, c);
		return -1;
	}
	return 0;
}

static int conn_writable(struct worker *w, struct conn *c)
{
	if (conn_flush(w, c) < 0)
		return -1;
	/* Output drained: answer pipelined requests parked by the high-water mark. */
	if (c->inlen)
		return conn_readable(w, c);
	return 0;
}

/* c's first read: the request often arrives with the handshake, so it is
 * read (and answered) without waiting for epoll to report it. A connection
 * set may arm c only after it (--shared-epoll: so no other thread is handed
 * its event meanwhile). */
static void first_read(struct worker *w, struct conn *c)
{
	if (conn_readable(w, c) == 0 && conn_set_of(w)->arm(w, c) < 0)
		conn_close(w, c);
}

/* Queues c's first read for admit_flush (or reads now if the list cannot grow). */
static void fresh_push(struct worker *w, struct conn *c)
{
	if (w->nfresh == w->fresh_cap) {
		int cap = w->fresh_cap ? 2 * w->fresh_cap : 64;
		int *grown = realloc(w->fresh, (size_t)cap * sizeof(*grown));

		if (!grown) {
			first_read(w, c);
			return;
		}
		w->fresh = grown;
		w->fresh_cap = cap;
	}
	w->fresh[w->nfresh++] = c->fd;
}

/* fd comes from accept4(SOCK_NONBLOCK) (here, or in the sibling that
 * passed it: the flag is the open file's, so it travels with it). */
int worker_admit(struct worker *w, int fd)
{
	struct conn *c = conn_alloc(w);

	if (c) {
		c->fd = fd;
		c->last_active_ns = w->clock_ns;
	}
	if (!c || conn_set_of(w)->add(w, c) < 0) {
		close(fd);
		if (c)
			conn_free(w, c);
		w->accept_errors++;
		return -1;
	}
	w->open_conns++;
	w->admitted++;
	fresh_push(w, c); /* read by admit_flush once the accept phase is over */
	return 0;
}

/* The first reads of the connections admitted since the last flush. They
 * run after the accept phase, not inside it: accepting until EAGAIN while
 * answering each new connection at once would let a steady stream of new
 * connections keep the worker in its accept loop while its open keep-alive
 * connections wait. */
static void admit_flush(struct worker *w)
{
	for (int i = 0; i < w->nfresh; i++) {
		int fd = w->fresh[i];
		/* None if it closed since it was admitted; a later admit that got
		 * the same fd is read twice, which costs one EAGAIN. (--shared-epoll:
		 * only the thread serving a connection's event closes it, and these
		 * are not armed yet, so each is here once.) */
		struct conn *c = fd < w->nconns_cap ? w->conns[fd] : NULL;

		if (c)
			first_read(w, c);
	}
	w->nfresh = 0;
}

int worker_pin(const struct server *srv, int i, char *err, size_t errlen)
{
	cpu_set_t set;
	int cpu;

	if (!srv->cfg.npin)
		return 0;
	cpu = srv->cfg.pin_cpus[i % srv->cfg.npin];
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* pid 0: the calling thread only, in either mode. */
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		snprintf(err, errlen, "pin to CPU %d: %s", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

static int conn_busy(const struct conn *c)
{
	return c->inlen || c->outlen || c->body_left;
}

/* ---- the default connection set: the worker's own epoll and table ---- */

static int own_open(struct worker *w)
{
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	return w->epfd < 0 ? -1 : 0;
}

static int own_listener_ctl(struct worker *w, int on, struct epoll_event *ev)
{
	return epoll_ctl(w->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, w->listen_fd, ev);
}

/* Grows the table to hold fd, then registers c (level-triggered EPOLLIN). */
static int own_add(struct worker *w, struct conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)c->fd };

	if (c->fd >= w->nconns_cap) {
		int cap = w->nconns_cap ? w->nconns_cap : 1024;
		struct conn **n;

		while (cap <= c->fd)
			cap *= 2;
		n = realloc(w->conns, (size_t)cap * sizeof(*n));
		if (!n)
			return -1;
		memset(n + w->nconns_cap, 0, (size_t)(cap - w->nconns_cap) * sizeof(*n));
		w->conns = n;
		w->nconns_cap = cap;
	}
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0)
		return -1;
	w->conns[c->fd] = c;
	return 0;
}

/* Registered by own_add, and level-triggered: nothing to arm. */
static int own_arm(struct worker *w, struct conn *c)
{
	(void)w;
	(void)c;
	return 0;
}

static void own_rearm(struct worker *w, struct conn *c)
{
	(void)w;
	(void)c;
}

static void own_set_writing(struct worker *w, struct conn *c)
{
	struct epoll_event ev = { .events = c->writing ? EPOLLOUT : EPOLLIN, .data.u64 = (uint64_t)c->fd };

	epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* No EPOLL_CTL_DEL first: closing a socket's last descriptor takes it out
 * of every epoll set, and a connection's descriptor here is its only one
 * (fdpass's sender closes its own once sent). */
static void own_drop(struct worker *w, struct conn *c)
{
	close(c->fd);
	w->conns[c->fd] = NULL;
}

/* Idle connections close now (a retiring worker keeps them for their next
 * request); the answer in progress on a busy one says close. */
static void own_stop(struct worker *w, int retire)
{
	for (int fd = 0; fd < w->nconns_cap; fd++) {
		struct conn *c = w->conns[fd];
		if (!c)
			continue;
		if (conn_busy(c))
			c->close_after_write = 1; /* the answer in progress says close */
		else if (!retire)
			conn_close(w, c);
	}
}

/* Closes connections idle past --idle-timeout and those whose request
 * head is still incomplete past --header-timeout (a slowloris: closed with
 * no answer; what it sent is dropped). */
static void own_sweep(struct worker *w, int64_t now)
{
	for (int fd = 0; fd < w->nconns_cap; fd++) {
		struct conn *c = w->conns[fd];
		if (c && (conn_expired(w, c, now) ||
			  (w->retiring && !conn_busy(c) && idle_ns(c, now) > (int64_t)RETIRE_IDLE_MS * 1000000)))
			conn_close(w, c);
	}
}

static int own_open_count(const struct worker *w)
{
	return w->open_conns;
}

static const struct conn_set own_conns = {
	.open = own_open,
	.listener_ctl = own_listener_ctl,
	.add = own_add,
	.arm = own_arm,
	.rearm = own_rearm,
	.set_writing = own_set_writing,
	.drop = own_drop,
	.stop = own_stop,
	.sweep = own_sweep,
	.open_count = own_open_count,
};

const struct conn_set *conn_set_of(const struct worker *w)
{
	return w->srv->conn_set ? w->srv->conn_set : &own_conns;
}

/* ---- the stop and the loop ---- */

/* SIGTERM: take no more connections, close idle ones, finish the rest.
 * retire (RETIRE_SIGNAL, a reload): the same, except that idle connections
 * stay open for their next request (see RETIRE_IDLE_MS). A SIGTERM while
 * retiring turns the retirement into a stop. */
static void worker_begin_stop(struct worker *w, int retire)
{
	if (!w->stopping) {
		w->stopping = 1;
		if (w->listen_fd >= 0)
			worker_listener_enable(w, 0, 0);
		if (w->srv->cfg.variant->bind_per_worker && w->listen_fd >= 0) {
			close(w->listen_fd); /* leave the reuseport group: no new connections here */
			w->listen_fd = -1;
		}
		if (w->srv->cfg.variant->leaving)
			w->srv->cfg.variant->leaving(w);
	}
	admit_flush(w); /* what leaving admitted is answered, not closed unread below */
	w->retiring = retire;
	conn_set_of(w)->stop(w, retire);
}

/* ACCEPTLAB_TEST_ARM_GAP_MS=INDEX:MS holds worker INDEX for MS ms after it
 * is ready and before its loop starts (a slow application import), so
 * tests can see what siblings do with a worker that has not started.
 * Returns the hold for w in ms (0: none). */
static int test_hold_ms(const struct worker *w)
{
	const char *s = getenv("ACCEPTLAB_TEST_ARM_GAP_MS");
	int index, ms;
	char tail;

	if (!s)
		return 0;
	if (sscanf(s, "%d:%d%c", &index, &ms, &tail) != 2 || index < 0 || ms < 0 || ms > 600000) {
		fprintf(stderr, "acceptlab-server: ACCEPTLAB_TEST_ARM_GAP_MS=%s: expected INDEX:MS\n", s);
		_exit(2);
	}
	return index == w->index ? ms : 0;
}

int worker_run(struct worker *w)
{
	const struct accept_variant *v = w->srv->cfg.variant;
	const struct conn_set *cs = conn_set_of(w);
	struct epoll_event evs[256];
	struct sigaction sa;
	sigset_t during_wait;
	char err[ERRLEN];
	int64_t next_sweep, stop_deadline = 0;
	int hold_ms;
	int stop_sig = w->srv->cfg.threads ? SIGUSR1 : SIGTERM;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(stop_sig, &sa, NULL);
	if (!w->srv->cfg.threads)
		sigaction(RETIRE_SIGNAL, &sa, NULL);
	/* The stop signals stay blocked except inside epoll_pwait, so a request
	 * in progress (even /sleep) finishes before the stop is seen. The
	 * supervisor blocks them before the fork. */
	pthread_sigmask(SIG_BLOCK, NULL, &during_wait);
	sigdelset(&during_wait, stop_sig);
	if (!w->srv->cfg.threads)
		sigdelset(&during_wait, RETIRE_SIGNAL);

	if (cs->open(w) < 0) {
		fprintf(stderr, "acceptlab-server: worker %d: epoll_create1: %s\n", w->index, strerror(errno));
		return 1;
	}
	/* Test knob: ACCEPTLAB_TEST_FAIL_SLOT=S makes a worker in slot S fail
	 * before it serves (a reload's new worker that cannot start). */
	if (!w->srv->cfg.threads && env_knob("ACCEPTLAB_TEST_FAIL_SLOT", -1, -1, MAX_SLOTS - 1) == w->slot) {
		fprintf(stderr, "acceptlab-server: worker %d: failing in slot %d (ACCEPTLAB_TEST_FAIL_SLOT)\n",
			w->index, w->slot);
		return 1;
	}
	if (v->worker_start(w, err, sizeof(err)) < 0) {
		fprintf(stderr, "acceptlab-server: worker %d: %s\n", w->index, err);
		return 1;
	}
	/* The worker serves from here: its loop runs next. A variant learns it
	 * before the ready record, so a burst sent the moment the server says
	 * ready finds every worker a candidate; with the test hold it learns
	 * it only after the hold (a worker that said ready but has not started). */
	hold_ms = test_hold_ms(w);
	if (!hold_ms && v->serving)
		v->serving(w);
	if (w->ready_fd >= 0) {
		struct worker_ready r = { .index = w->index, .slot = w->slot, .pid = w->pid, .tid = w->tid };
		format_affinity(r.cpu, sizeof(r.cpu));
		if (write(w->ready_fd, &r, sizeof(r)) != sizeof(r))
			return 1; /* the supervisor is gone */
	}
	if (hold_ms) {
		struct timespec ts = { hold_ms / 1000, (long)(hold_ms % 1000) * 1000000 };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		if (v->serving)
			v->serving(w);
	}

	w->clock_ns = now_ns();
	next_sweep = w->clock_ns + (int64_t)SWEEP_INTERVAL_MS * 1000000;
	for (;;) {
		int timeout = w->retiring ? RETIRE_SWEEP_MS : SWEEP_INTERVAL_MS, n;
		int64_t now;

		if (w->accept_paused_until) {
			int64_t left = w->accept_paused_until - now_ns();
			if (left <= 0)
				accept_resume(w);
			else if (left / 1000000 + 1 < timeout)
				timeout = (int)(left / 1000000) + 1;
		}
		if (v->pass_begin && !w->stopping) {
			int cap = v->pass_begin(w);
			if (cap >= 0 && cap < timeout)
				timeout = cap;
		}
		n = epoll_pwait(w->epfd, evs, 256, timeout, &during_wait);
		w->clock_ns = now_ns();
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "acceptlab-server: worker %d: epoll_pwait: %s\n", w->index, strerror(errno));
			return 1;
		}
		if (n > 0) /* a wakeup with work: a timeout's or a signal's return is not one */
			w->epoll_returns++;
		if (v->pass_woke)
			v->pass_woke(w);
		if ((stop_requested && (!w->stopping || w->retiring)) || (retire_requested && !w->stopping)) {
			if (!w->stopping)
				stop_deadline = now_ns() + (int64_t)STOP_DRAIN_MS * 1000000;
			worker_begin_stop(w, !stop_requested);
		}
		/* The accept phase first (as nginx handles posted accept events
		 * before the others), then the variant's after_accepts, then the
		 * connections. */
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;

			if (tag == LISTENER_TAG && !w->stopping)
				v->listener_readable(w);
			else if (tag == VARIANT_TAG)
				v->variant_fd_ready(w);
		}
		if (v->after_accepts)
			v->after_accepts(w);
		admit_flush(w); /* every admit of the pass so far: pass_woke, accept phase, after_accepts */
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;
			struct conn *c;

			if (tag == LISTENER_TAG || tag == VARIANT_TAG)
				continue;
			c = (int)tag < w->nconns_cap ? w->conns[(int)tag] : NULL;
			if (!c)
				continue; /* closed earlier in this pass */
			if ((evs[i].events & EPOLLOUT ? conn_writable(w, c) : conn_readable(w, c)) == 0)
				cs->rearm(w, c);
		}
		if (v->pass_end)
			v->pass_end(w);

		now = now_ns();
		if (now >= next_sweep) {
			cs->sweep(w, now);
			next_sweep = now + (int64_t)(w->retiring ? RETIRE_SWEEP_MS : SWEEP_INTERVAL_MS) * 1000000;
		}
		if (w->stopping && (now >= stop_deadline || cs->open_count(w) == 0))
			break;
	}
	emit_line(STDOUT_FILENO,
		  "{\"event\":\"worker_exit\",\"index\":%d,\"slot\":%d,\"pid\":%d,\"tid\":%d,\"retired\":%s,"
		  "\"accepted\":%llu,\"admitted\":%llu,\"requests\":%llu,\"epoll_returns\":%llu,"
		  "\"accept_eagain\":%llu,\"accept_errors\":%llu}",
		  w->index, w->slot, (int)w->pid, (int)w->tid, w->retiring ? "true" : "false",
		  (unsigned long long)w->accepted,
		  (unsigned long long)w->admitted, (unsigned long long)w->requests,
		  (unsigned long long)w->epoll_returns,
		  (unsigned long long)w->accept_eagain, (unsigned long long)w->accept_errors);
	free(w->fresh);
	w->fresh = NULL;
	while (w->spare) {
		struct conn *c = w->spare;

		w->spare = c->next_spare;
		free(c->out);
		free(c);
	}
	w->nspare = 0;
	return 0;
}
