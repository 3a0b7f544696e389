/* response.h: the probe's HTTP/1.1 response parsers. Never read past
 * buf[len - 1].
 *
 * resp_parse: one whole response held in a buffer, for the answers that
 * name a worker (/pid): needs Content-Length (the probe reads pipelined and
 * keep-alive answers, so it must know where each one ends), returns the
 * body and a header's value.
 *
 * resp_framer: where any HTTP/1.x response ends, fed its bytes as they
 * arrive and keeping none of them (--worker-from none: a complete answer of
 * any status counts, nothing in it is read): Content-Length, chunked and
 * close-delimited bodies; no body for 204, 304 and 1xx; an interim 1xx
 * (100 Continue, 103 Early Hints) is skipped and the final response that
 * follows is the one framed. */
#ifndef ACCEPTLAB_RESPONSE_H
#define ACCEPTLAB_RESPONSE_H

#include <stddef.h>

#define RESP_MAX_HEAD 16384
#define RESP_MAX_BODY (1 << 20)

enum {
	RESP_PARTIAL = -2,   /* read more */
	RESP_MALFORMED = -1, /* not a response the probe understands */
};

struct http_response {
	int status;
	int close;            /* the server said Connection: close */
	const char *body;     /* points into buf */
	size_t body_len;
	const char *header;   /* value of the header the caller asked for, or NULL */
	size_t header_len;
};

/* Parses one complete response from buf[0..len). want_header (may be NULL)
 * names a header whose value to return, matched case-insensitively.
 * Returns the response's total length (head plus body), RESP_PARTIAL or
 * RESP_MALFORMED. */
int resp_parse(const char *buf, size_t len, const char *want_header, struct http_response *r);

#define RESP_LINE_CAP 256          /* bytes of a head or chunk-size line the framer looks at */
#define RESP_FRAMER_MAX_HEAD 65536 /* a longer head (all its lines) is malformed */

/* How a response's body ends, once its head is read. */
enum resp_body { RESP_BODY_NONE, RESP_BODY_LENGTH, RESP_BODY_CHUNKED, RESP_BODY_CLOSE };

struct resp_framer {
	/* Set from the final response's head once it has been read: */
	int status;          /* 100..999 */
	int close;           /* the connection ends after it: Connection: close, an HTTP/1.0
	                      * answer without keep-alive, or a body that ends at the close */
	enum resp_body body;
	/* The parser's own state: */
	int state, http10, have_length, chunked, te, conn_close, keep_alive;
	unsigned long long length, left; /* Content-Length; what is left of the body or the chunk */
	unsigned long long seen;         /* bytes of this response so far */
	size_t line_len, head_len;       /* this line's bytes so far (all, not only those kept); the head's */
	char line[RESP_LINE_CAP];
};

/* Makes f ready for a new response (call before each request's answer). */
void resp_framer_init(struct resp_framer *f);

/* Feeds the next len bytes of the connection. Returns how many of them
 * belong to the response (fewer than len only when it ended inside them:
 * the rest is not its), or RESP_MALFORMED as soon as the bytes cannot be
 * an HTTP/1.x response (the first byte that is not "HTTP/1." so far, a bad
 * status line, header, length or chunk size). Call resp_framer_done after. */
long resp_framer_feed(struct resp_framer *f, const char *buf, size_t len);

/* 1 when the response is complete (and its status set), else 0. */
int resp_framer_done(const struct resp_framer *f);

/* The peer closed the connection: 1 if that completes the response (a
 * close-delimited body, or one already done), else 0 (cut short). */
int resp_framer_eof(struct resp_framer *f);

/* Bytes fed so far to the response in progress (0: nothing yet). */
size_t resp_framer_seen(const struct resp_framer *f);

#endif
