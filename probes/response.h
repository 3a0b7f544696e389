/* response.h: the probe's HTTP/1.1 response parser. Needs Content-Length
 * (the probe reads pipelined and keep-alive answers, so it must know where
 * each one ends). Never reads past buf[len - 1]. */
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

#endif
