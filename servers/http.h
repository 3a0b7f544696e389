/* http.h: acceptlab's HTTP/1.x request-head parser.
 *
 * Small on purpose: it parses exactly what the server needs (method, target,
 * version, Connection, Content-Length, Transfer-Encoding) and validates the
 * rest of the head, so it can be unit-tested and fuzzed on its own. It never
 * allocates and never reads past buf[len - 1].
 */
#ifndef ACCEPTLAB_HTTP_H
#define ACCEPTLAB_HTTP_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_MAX_HEAD 8192 /* request line plus headers; over this -> 431 */

enum {
	HTTP_PARTIAL = -2,  /* head incomplete: read more */
	HTTP_MALFORMED = -1, /* not HTTP/1.x we accept: answer 400 and close */
	HTTP_TOO_LARGE = -3, /* head longer than HTTP_MAX_HEAD: answer 431 and close */
};

struct http_request {
	const char *method;   /* points into the caller's buffer */
	size_t method_len;
	const char *path;     /* target up to '?' */
	size_t path_len;
	const char *query;    /* after '?', NULL if none */
	size_t query_len;
	int minor_version;    /* 0 or 1 */
	int keep_alive;       /* 1 unless "Connection: close", or HTTP/1.0 without "keep-alive" */
	uint64_t content_length; /* body bytes that follow the head */
};

/* Parses one request head from buf[0..len).
 * Returns the head's length in bytes (> 0, the body is not included) and
 * fills *req; or HTTP_PARTIAL, HTTP_MALFORMED, HTTP_TOO_LARGE.
 * Line ends may be CRLF or bare LF. Transfer-Encoding is refused (MALFORMED). */
int http_parse_request(const char *buf, size_t len, struct http_request *req);

/* Looks up key in a query string "a=1&b=2" and parses its value as a
 * decimal in [0, max]. Returns 0 and sets *out, or -1 if absent or invalid. */
int http_query_u64(const char *query, size_t query_len, const char *key,
		   uint64_t max, uint64_t *out);

/* Reason phrase for the status codes the server sends ("OK", ...). */
const char *http_reason(int status);

#endif
