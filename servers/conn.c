/* conn.c: a worker's connections and the answers they get: a connection's
 * memory, its reads, the requests they carry (parsed by http.c, answered by
 * app.c), the answer's bytes, its writes, its timeouts and its close; and
 * worker_admit, where a connected socket from the accept path (accept.c, or
 * a variant) becomes a connection. How a connection is registered with
 * epoll is its connection set's (w->conn_set, conn.h); when it is served is
 * the loop's (worker.c), which calls conn_serve for each of its events. */
#include "conn.h"
#include "app.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define OUT_HIGH_WATER (256 * 1024)   /* stop parsing pipelined requests above this */
#define MAX_BODY (1 << 20)            /* request bodies are read and discarded */
/* A worker retiring for a reload keeps each idle keep-alive connection until
 * its next request, which it answers with Connection: close, so a client
 * that sends on it never finds it closed under its request. One idle this
 * long is closed instead (its client has stopped sending; closing an idle
 * connection is what the idle timeout does anyway). */
#define RETIRE_IDLE_MS 1000

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

int conn_retired_idle(const struct worker *w, struct conn *c, int64_t now)
{
	return w->retiring && !conn_busy(c) && idle_ns(c, now) > (int64_t)RETIRE_IDLE_MS * 1000000;
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

void conn_close(struct worker *w, struct conn *c)
{
	w->conn_set->drop(w, c);
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
	int status, waited, ka = r->keep_alive && !w->stopping && !w->srv->cfg.variant->one_request;

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
	w->conn_set->set_writing(w, c);
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
	if (conn_readable(w, c) == 0 && w->conn_set->arm(w, c) < 0)
		conn_close(w, c);
}

/* Queues c's first read for conn_admit_flush (or reads now if the list cannot grow). */
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
	if (!c || w->conn_set->add(w, c) < 0) {
		close(fd);
		if (c)
			conn_free(w, c);
		w->accept_errors++;
		return -1;
	}
	w->open_conns++;
	w->admitted++;
	fresh_push(w, c); /* read by conn_admit_flush once the accept phase is over */
	return 0;
}

/* Not inside the accept phase: accepting until EAGAIN while answering each
 * new connection at once would let a steady stream of new connections keep
 * the worker in its accept loop while its open keep-alive connections wait. */
void conn_admit_flush(struct worker *w)
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

int conn_serve(struct worker *w, struct conn *c, uint32_t events)
{
	return events & EPOLLOUT ? conn_writable(w, c) : conn_readable(w, c);
}

void conn_release_memory(struct worker *w)
{
	free(w->fresh);
	w->fresh = NULL;
	w->nfresh = w->fresh_cap = 0;
	while (w->spare) {
		struct conn *c = w->spare;

		w->spare = c->next_spare;
		free(c->out);
		free(c);
	}
	w->nspare = 0;
}
