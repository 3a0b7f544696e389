/* worker.c: one worker's event loop: connections, HTTP, and the accept
 * path's helpers that variants call. The variant decides when to accept;
 * everything after accept() is here, the same for every variant. */
#include "server.h"
#include "http.h"
#include "net.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define IN_CAP (HTTP_MAX_HEAD + 8192) /* room for a full head plus pipelined bytes */
#define OUT_HIGH_WATER (256 * 1024)   /* stop parsing pipelined requests above this */
#define MAX_BODY (1 << 20)            /* request bodies are read and discarded */
#define MAX_WORK_US 10000000ULL       /* /work?us= cap: 10 s of CPU */
#define MAX_SLEEP_MS 60000ULL         /* /sleep?ms= cap */
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
/* accept() failed for want of descriptors (EMFILE, ENFILE, ENOBUFS, ENOMEM):
 * the listener leaves the epoll set for this long, so a level-triggered
 * listener does not spin and an edge-triggered one is retried even if no
 * new connection arrives (nginx rests 500 ms; a shorter rest resumes sooner). */
#define ACCEPT_REST_MS 100

struct conn {
	int fd;
	size_t inlen;
	uint64_t body_left;  /* bytes of a request body still to discard */
	char *out;
	size_t outlen, outoff, outcap;
	int64_t last_active_ns; /* read by other threads' sweeps: touch() and idle_ns() */
	/* When the request head now incomplete in in[] got its first byte; 0
	 * when none is (nothing buffered, a body being skipped, or only
	 * complete requests waiting for output to drain). The header timeout
	 * runs from it; read by other threads' sweeps like last_active_ns. */
	int64_t head_started_ns;
	int close_after_write; /* an answer said Connection: close */
	int peer_closed;       /* read() returned 0 */
	int writing;           /* EPOLLOUT registered */
	char in[IN_CAP];
};

/* Set by the stop signal: SIGTERM from the supervisor in process mode,
 * SIGUSR1 from the main thread (pthread_kill, one per thread) in threads
 * mode. Either way it is unblocked only inside epoll_pwait. */
static volatile sig_atomic_t stop_requested;
/* Set by RETIRE_SIGNAL (process mode): the supervisor's reload replaces this
 * worker; stop taking connections and let the open ones finish gently. */
static volatile sig_atomic_t retire_requested;

static int shared(const struct worker *w);

/* --shared-epoll (threads mode): every thread waits in ONE epoll instance
 * that holds the listener and every connection, so the kernel, not the
 * thread that accepted, decides which thread serves each event. Made once by
 * worker_shared_init before the threads start.
 *  - Connections are registered EPOLLONESHOT: an event disarms the
 *    connection until the thread serving it re-arms it at the end, so one
 *    connection is never served by two threads at once.
 *  - The table is allocated once (no realloc while others read it). A slot
 *    changes only under the lock: set by the acceptor before the connection
 *    is armed, cleared by the thread that closes it. Only the thread serving
 *    a connection's event closes it.
 *  - The idle sweep and the stop do not close others' connections: they
 *    shut their read side down under the lock, which raises an event, and
 *    the thread that serves it reads EOF and closes as for any peer. */
struct conn_table {
	struct conn **slots;
	int cap;
	int epfd;
	pthread_mutex_t lock;
	_Atomic int open;
};

static void on_stop_signal(int sig)
{
	if (sig == RETIRE_SIGNAL)
		retire_requested = 1;
	else
		stop_requested = 1;
}

int worker_watch_listener(struct worker *w, uint32_t events, char *err, size_t errlen)
{
	if (worker_listener_enable(w, events, 1) < 0) {
		snprintf(err, errlen, "epoll_ctl(listener, events 0x%x): %s", events, strerror(errno));
		return -1;
	}
	return 0;
}

int worker_listener_enable(struct worker *w, uint32_t events, int on)
{
	struct epoll_event ev = { .events = events, .data.u64 = LISTENER_TAG };

	if (on == w->listener_watched)
		return 0;
	if (on && w->accept_paused_until) {
		errno = EMFILE; /* resting: the loop adds it back when the rest is over */
		return -1;
	}
	/* --shared-epoll: one registration serves every thread; the first
	 * thread's ADD (or DEL) is everyone's. An ADD that finds another
	 * thread's registration re-arms it with MOD, which checks readiness
	 * anew: the listener is edge-triggered, and its last edge may have gone
	 * to a thread that then failed to accept (EMFILE) while this one
	 * rested, leaving a full queue that no new edge would ever report. */
	if (epoll_ctl(w->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, w->listen_fd, &ev) < 0) {
		if (!shared(w) || errno != (on ? EEXIST : ENOENT))
			return -1;
		if (on && epoll_ctl(w->epfd, EPOLL_CTL_MOD, w->listen_fd, &ev) < 0)
			return -1;
	}
	w->listener_watched = on;
	if (on)
		w->listener_events = events;
	return 0;
}

/* Out of descriptors: take the listener out for ACCEPT_REST_MS (remembering
 * to put it back only if it was there). */
static void accept_rest(struct worker *w)
{
	w->accept_paused_until = now_ns() + (int64_t)ACCEPT_REST_MS * 1000000;
	if (w->listener_watched && worker_listener_enable(w, 0, 0) == 0)
		w->rest_took_listener = 1; /* kept through a second failure during the rest */
}

/* The rest is over: the listener goes back if the rest took it out. */
static void accept_resume(struct worker *w)
{
	int took = w->rest_took_listener;

	w->accept_paused_until = 0;
	w->rest_took_listener = 0;
	if (took && !w->stopping && w->listen_fd >= 0)
		worker_listener_enable(w, w->listener_events, 1);
}

int worker_bind_own_listener(struct worker *w, char *err, size_t errlen)
{
	w->listen_fd = net_listen_tcp(w->srv->cfg.host, w->srv->bound_port, 1, err, errlen);
	return w->listen_fd < 0 ? -1 : 0;
}

static void touch(struct conn *c)
{
	__atomic_store_n(&c->last_active_ns, now_ns(), __ATOMIC_RELAXED);
}

static int64_t idle_ns(struct conn *c, int64_t now)
{
	return now - __atomic_load_n(&c->last_active_ns, __ATOMIC_RELAXED);
}

/* Past --idle-timeout, or its request head past --header-timeout. */
static int conn_expired(const struct worker *w, struct conn *c, int64_t now)
{
	int64_t head = __atomic_load_n(&c->head_started_ns, __ATOMIC_RELAXED);

	return idle_ns(c, now) > (int64_t)w->srv->cfg.idle_timeout_s * 1000000000 ||
	       (head && now - head > (int64_t)w->srv->cfg.header_timeout_s * 1000000000);
}

int worker_shared_init(struct server *srv, char *err, size_t errlen)
{
	struct conn_table *t = calloc(1, sizeof(*t));
	struct rlimit rl;

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	t->cap = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (1u << 20) ? (int)rl.rlim_cur : 1 << 20;
	t->slots = calloc((size_t)t->cap, sizeof(*t->slots));
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!t->slots || t->epfd < 0) {
		snprintf(err, errlen, "--shared-epoll: %s", t->slots ? strerror(errno) : "out of memory");
		return -1;
	}
	pthread_mutex_init(&t->lock, NULL);
	srv->shared = t;
	return 0;
}

static int shared(const struct worker *w)
{
	return w->srv->shared != NULL;
}

/* --shared-epoll: re-arms c for its next event (it was disarmed when this
 * thread was handed the last one). */
static void conn_rearm(struct worker *w, struct conn *c)
{
	struct epoll_event ev = { .events = (c->writing ? EPOLLOUT : EPOLLIN) | EPOLLONESHOT,
				  .data.u64 = (uint64_t)c->fd };

	epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void conn_close(struct worker *w, struct conn *c)
{
	epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	if (shared(w)) {
		struct conn_table *t = w->srv->shared;
		pthread_mutex_lock(&t->lock);
		t->slots[c->fd] = NULL;
		close(c->fd); /* under the lock: the fd is not reused while a sweep looks */
		pthread_mutex_unlock(&t->lock);
		atomic_fetch_sub(&t->open, 1);
	} else {
		close(c->fd);
		w->conns[c->fd] = NULL;
	}
	w->open_conns--;
	free(c->out);
	free(c);
	if (w->srv->cfg.variant->conn_closed)
		w->srv->cfg.variant->conn_closed(w);
}

static int conn_slot(struct worker *w, int fd)
{
	if (shared(w))
		return fd < w->nconns_cap ? 0 : -1; /* the shared table never grows */
	if (fd >= w->nconns_cap) {
		int cap = w->nconns_cap ? w->nconns_cap : 1024;
		struct conn **n;

		while (cap <= fd)
			cap *= 2;
		n = realloc(w->conns, (size_t)cap * sizeof(*n));
		if (!n)
			return -1;
		memset(n + w->nconns_cap, 0, (size_t)(cap - w->nconns_cap) * sizeof(*n));
		w->conns = n;
		w->nconns_cap = cap;
	}
	return 0;
}

static int out_append(struct conn *c, const char *data, size_t len)
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
	memcpy(c->out + c->outlen, data, len);
	c->outlen += len;
	return 0;
}

static void respond(struct worker *w, struct conn *c, int status, const char *body,
		    size_t body_len, int keep_alive)
{
	char head[256];
	int n;

	n = snprintf(head, sizeof(head),
		     "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
		     "X-Worker: %d\r\nConnection: %s\r\n\r\n",
		     status, http_reason(status), body_len, w->index,
		     keep_alive ? "keep-alive" : "close");
	if (out_append(c, head, (size_t)n) < 0 || out_append(c, body, body_len) < 0)
		keep_alive = 0; /* out of memory: what fits is sent, then the connection closes */
	if (!keep_alive)
		c->close_after_write = 1;
}

/* Spins on the thread's CPU clock, so preemption does not shorten the work. */
static void spin_cpu_us(uint64_t us)
{
	struct timespec ts;
	int64_t start, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	start = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	do {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		t = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	} while (t - start < (int64_t)us * 1000);
}

static int path_is(const struct http_request *r, const char *p)
{
	size_t n = strlen(p);
	return r->path_len == n && memcmp(r->path, p, n) == 0;
}

/* Answers one parsed request. */
static void route_request(struct worker *w, struct conn *c, const struct http_request *r)
{
	char body[128];
	int n, ka = r->keep_alive && !w->stopping;
	uint64_t v;

	w->requests++;
	if (!(r->method_len == 3 && memcmp(r->method, "GET", 3) == 0)) {
		n = snprintf(body, sizeof(body), "only GET is served\n");
		respond(w, c, 405, body, (size_t)n, ka);
	} else if (path_is(r, "/pid")) {
		/* Threads mode answers the thread's id: the worker, not the process. */
		n = snprintf(body, sizeof(body), "%d\n", (int)(w->srv->cfg.threads ? w->tid : w->pid));
		respond(w, c, 200, body, (size_t)n, ka);
	} else if (path_is(r, "/variant")) {
		char big[8192];
		const struct accept_variant *v = w->srv->cfg.variant;
		n = v->describe ? v->describe(w, big, sizeof(big)) :
				  snprintf(big, sizeof(big), "{\"variant\":\"%s\"}\n", v->name);
		respond(w, c, 200, big, (size_t)n, ka);
	} else if (path_is(r, "/")) {
		n = snprintf(body, sizeof(body), "hello from acceptlab worker %d\n", w->index);
		respond(w, c, 200, body, (size_t)n, ka);
	} else if (path_is(r, "/work")) {
		if (http_query_u64(r->query, r->query_len, "us", MAX_WORK_US, &v) < 0) {
			n = snprintf(body, sizeof(body), "/work needs us=N with N <= %llu\n", MAX_WORK_US);
			respond(w, c, 400, body, (size_t)n, ka);
			return;
		}
		spin_cpu_us(v);
		n = snprintf(body, sizeof(body), "worked %llu us\n", (unsigned long long)v);
		respond(w, c, 200, body, (size_t)n, ka);
	} else if (path_is(r, "/sleep")) {
		struct timespec ts;
		if (http_query_u64(r->query, r->query_len, "ms", MAX_SLEEP_MS, &v) < 0) {
			n = snprintf(body, sizeof(body), "/sleep needs ms=N with N <= %llu\n", MAX_SLEEP_MS);
			respond(w, c, 400, body, (size_t)n, ka);
			return;
		}
		ts.tv_sec = (time_t)(v / 1000);
		ts.tv_nsec = (long)(v % 1000) * 1000000;
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		n = snprintf(body, sizeof(body), "slept %llu ms\n", (unsigned long long)v);
		respond(w, c, 200, body, (size_t)n, ka);
	} else {
		n = snprintf(body, sizeof(body), "not found\n");
		respond(w, c, 404, body, (size_t)n, ka);
	}
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
	struct epoll_event ev = { .events = on ? EPOLLOUT : EPOLLIN, .data.u64 = (uint64_t)c->fd };

	if (c->writing == on)
		return;
	c->writing = on;
	if (!shared(w)) /* shared: conn_rearm arms it when this thread is done */
		epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Writes what is buffered. Returns -1 if the connection was closed. */
static int conn_flush(struct worker *w, struct conn *c)
{
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
		touch(c);
	}
	c->outoff = c->outlen = 0;
	if (c->close_after_write || c->peer_closed) {
		conn_close(w, c);
		return -1;
	}
	conn_set_writing(w, c, 0);
	return 0;
}

/* Returns -1 if the connection was closed, else 0 (also for the next two). */
static int conn_readable(struct worker *w, struct conn *c)
{
	for (;;) {
		ssize_t n;

		if (c->inlen == IN_CAP) {
			/* Full: either a head over the limit (the parser says 431)
			 * or pipelined requests waiting for output to drain. */
			conn_process(w, c);
			if (c->inlen == IN_CAP || c->outlen)
				break;
		}
		n = read(c->fd, c->in + c->inlen, IN_CAP - c->inlen);
		if (n > 0) {
			c->inlen += (size_t)n;
			touch(c);
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
 * read (and answered) without waiting for epoll to report it.
 * --shared-epoll: c is armed only after it, so no other thread is handed
 * its event meanwhile. */
static void first_read(struct worker *w, struct conn *c)
{
	struct epoll_event ev;

	if (conn_readable(w, c) == 0 && shared(w)) {
		ev.events = (c->writing ? EPOLLOUT : EPOLLIN) | EPOLLONESHOT;
		ev.data.u64 = (uint64_t)c->fd;
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0)
			conn_close(w, c);
	}
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

int worker_admit(struct worker *w, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)fd };
	struct conn *c;

	if (conn_slot(w, fd) < 0 || !(c = calloc(1, sizeof(*c)))) {
		close(fd);
		w->accept_errors++;
		return -1;
	}
	net_nonblock(fd);
	net_nodelay(fd);
	c->fd = fd;
	c->last_active_ns = now_ns();
	if (shared(w)) {
		/* In the table first, armed last: no other thread can be handed
		 * its event while this one still reads it. */
		struct conn_table *t = w->srv->shared;
		pthread_mutex_lock(&t->lock);
		t->slots[fd] = c;
		pthread_mutex_unlock(&t->lock);
		atomic_fetch_add(&t->open, 1);
		w->open_conns++;
		w->admitted++;
		fresh_push(w, c); /* read, then armed, by admit_flush */
		return 0;
	}
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		free(c);
		w->accept_errors++;
		return -1;
	}
	w->conns[fd] = c;
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

int worker_accept_one(struct worker *w, struct sockaddr_in *peer)
{
	socklen_t len = sizeof(*peer);

	for (;;) {
		int fd = accept4(w->listen_fd, (struct sockaddr *)peer, peer ? &len : NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			w->accepted++;
			return fd;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EAGAIN) {
			w->accept_eagain++;
		} else {
			w->accept_errors++;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				accept_rest(w);
		}
		return -1;
	}
}

int worker_accept_batch(struct worker *w, int max)
{
	int got = 0, fd;

	while ((max < 0 || got < max) && (fd = worker_accept_one(w, NULL)) >= 0) {
		got++;
		worker_admit(w, fd);
	}
	return got;
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

/* --shared-epoll: shuts down the read side of every connection past the
 * idle or header timeout (all: of every connection), under the table's
 * lock. Whichever thread serves the event that raises reads EOF and closes
 * it (a head still incomplete gets no answer). */
static void shutdown_reads(struct worker *w, int64_t now, int all)
{
	struct conn_table *t = w->srv->shared;

	pthread_mutex_lock(&t->lock);
	for (int fd = 0; fd < t->cap; fd++) {
		struct conn *c = t->slots[fd];
		if (c && (all || conn_expired(w, c, now)))
			shutdown(fd, SHUT_RD);
	}
	pthread_mutex_unlock(&t->lock);
}

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
	if (shared(w)) {
		/* Every connection's read side ends; whichever thread serves
		 * its event answers what it has read (saying close) and closes. */
		shutdown_reads(w, 0, 1);
		return;
	}
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
static void sweep_idle(struct worker *w, int64_t now)
{
	if (shared(w)) {
		shutdown_reads(w, now, 0);
		return;
	}
	for (int fd = 0; fd < w->nconns_cap; fd++) {
		struct conn *c = w->conns[fd];
		if (c && (conn_expired(w, c, now) ||
			  (w->retiring && !conn_busy(c) && idle_ns(c, now) > (int64_t)RETIRE_IDLE_MS * 1000000)))
			conn_close(w, c);
	}
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

	if (shared(w)) {
		struct conn_table *t = w->srv->shared;
		w->epfd = t->epfd;
		w->conns = t->slots;
		w->nconns_cap = t->cap;
	} else {
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
	}
	if (w->epfd < 0) {
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

	next_sweep = now_ns() + (int64_t)SWEEP_INTERVAL_MS * 1000000;
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
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "acceptlab-server: worker %d: epoll_pwait: %s\n", w->index, strerror(errno));
			return 1;
		}
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
			if ((evs[i].events & EPOLLOUT ? conn_writable(w, c) : conn_readable(w, c)) == 0 &&
			    shared(w))
				conn_rearm(w, c);
		}
		if (v->pass_end)
			v->pass_end(w);

		now = now_ns();
		if (now >= next_sweep) {
			sweep_idle(w, now);
			next_sweep = now + (int64_t)(w->retiring ? RETIRE_SWEEP_MS : SWEEP_INTERVAL_MS) * 1000000;
		}
		if (w->stopping && (now >= stop_deadline ||
				    (shared(w) ? atomic_load(&((struct conn_table *)w->srv->shared)->open) :
						 w->open_conns) == 0))
			break;
	}
	emit_line(STDOUT_FILENO,
		  "{\"event\":\"worker_exit\",\"index\":%d,\"slot\":%d,\"pid\":%d,\"tid\":%d,\"retired\":%s,"
		  "\"accepted\":%llu,\"admitted\":%llu,\"requests\":%llu,\"accept_eagain\":%llu,\"accept_errors\":%llu}",
		  w->index, w->slot, (int)w->pid, (int)w->tid, w->retiring ? "true" : "false",
		  (unsigned long long)w->accepted,
		  (unsigned long long)w->admitted, (unsigned long long)w->requests,
		  (unsigned long long)w->accept_eagain, (unsigned long long)w->accept_errors);
	free(w->fresh);
	w->fresh = NULL;
	return 0;
}
