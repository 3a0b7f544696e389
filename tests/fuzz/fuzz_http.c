/* fuzz_http.c: libFuzzer target for the request-head parser (servers/http.c).
 *
 * Build:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iservers \
 *         tests/fuzz/fuzz_http.c servers/http.c -o build/fuzz_http
 * Run:
 *   build/fuzz_http -max_len=12000 tests/fuzz/corpus_http
 *
 * Besides the sanitizers' own checks, every accepted head must satisfy the
 * contract in http.h; a violation abort()s with a line on stderr.
 *
 * The length bound: http_parse_request looks at no more than
 * min(len, HTTP_MAX_HEAD) bytes, and that window includes the leading empty
 * lines it skips (they are counted in the returned length). So the exact bound
 * is 0 < ret <= min(size, HTTP_MAX_HEAD); there is no extra allowance for
 * leading empty lines.
 */
#include "http.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUERY_MAX 60000000ULL /* a max for http_query_u64, as a server would use */

#define ENSURE(cond, what)                                                   \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "fuzz_http: invariant failed: %s (%s)\n", \
				(what), #cond);                              \
			abort();                                             \
		}                                                            \
	} while (0)

/* Is [p, p + n) inside [lo, hi)? */
static int inside(const char *p, size_t n, const char *lo, const char *hi)
{
	return p >= lo && p <= hi && n <= (size_t)(hi - p);
}

/* Re-parses a copy of buf[0..n) in a heap block of exactly n bytes, so that
 * ASan sees any read past its end (the fuzzer's own buffer is longer). */
static int parse_copy(const char *buf, size_t n, struct http_request *req)
{
	char *c = malloc(n ? n : 1);
	int r;

	if (!c)
		abort();
	if (n)
		memcpy(c, buf, n);
	r = http_parse_request(c, n, req);
	free(c);
	return r;
}

/* Checks one result of http_parse_request(buf, size). */
static void check(const char *buf, size_t size, int ret, const struct http_request *req)
{
	const char *end;
	struct http_request again;
	uint64_t v;

	if (ret <= 0) {
		ENSURE(ret == HTTP_PARTIAL || ret == HTTP_MALFORMED || ret == HTTP_TOO_LARGE,
		       "negative result is one of the three documented codes");
		ENSURE(ret != HTTP_PARTIAL || size < HTTP_MAX_HEAD,
		       "HTTP_PARTIAL only while fewer than HTTP_MAX_HEAD bytes are buffered");
		ENSURE(ret != HTTP_TOO_LARGE || size >= HTTP_MAX_HEAD,
		       "HTTP_TOO_LARGE only once HTTP_MAX_HEAD bytes are buffered");
		return;
	}

	ENSURE((size_t)ret <= size, "length <= size");
	ENSURE(ret <= HTTP_MAX_HEAD, "length <= HTTP_MAX_HEAD (leading empty lines included)");
	ENSURE(buf[ret - 1] == '\n', "head ends with LF");
	end = buf + ret;

	ENSURE(req->method != NULL && req->method_len > 0, "method non-empty");
	ENSURE(inside(req->method, req->method_len, buf, end), "method inside the head");
	ENSURE(req->method[req->method_len] == ' ', "method followed by SP");

	ENSURE(req->path != NULL, "path non-NULL");
	ENSURE(inside(req->path, req->path_len, buf, end), "path inside the head");
	ENSURE(req->path > req->method + req->method_len, "path after the method");
	for (size_t i = 0; i < req->path_len; i++)
		ENSURE(req->path[i] > 0x20 && req->path[i] < 0x7f && req->path[i] != '?',
		       "path is visible ASCII without '?'");
	if (req->query) {
		ENSURE(req->path[req->path_len] == '?', "'?' between path and query");
		ENSURE(req->query == req->path + req->path_len + 1, "query right after '?'");
		ENSURE(inside(req->query, req->query_len, buf, end), "query inside the head");
		ENSURE(req->path_len + 1 + req->query_len <= (size_t)(end - req->path),
		       "path_len + 1 + query_len fit in the head");
		ENSURE(req->query[req->query_len] == ' ', "target followed by SP");
		for (size_t i = 0; i < req->query_len; i++)
			ENSURE(req->query[i] > 0x20 && req->query[i] < 0x7f,
			       "query is visible ASCII");
	} else {
		ENSURE(req->query_len == 0, "no query => query_len 0");
		ENSURE(req->path[req->path_len] == ' ', "target followed by SP");
	}
	ENSURE(req->minor_version == 0 || req->minor_version == 1, "minor_version in {0,1}");
	ENSURE(req->keep_alive == 0 || req->keep_alive == 1, "keep_alive in {0,1}");

	/* The head alone parses the same: nothing after it was looked at. */
	ENSURE(parse_copy(buf, (size_t)ret, &again) == ret, "head alone gives the same length");
	ENSURE(again.method_len == req->method_len && again.path_len == req->path_len &&
	       again.query_len == req->query_len && (again.query == NULL) == (req->query == NULL) &&
	       again.minor_version == req->minor_version && again.keep_alive == req->keep_alive &&
	       again.content_length == req->content_length,
	       "head alone gives the same fields");
	/* One byte short of the final LF, the head is incomplete. */
	ENSURE(parse_copy(buf, (size_t)ret - 1, &again) == HTTP_PARTIAL,
	       "head minus its last byte is HTTP_PARTIAL");

	/* The query lookup stays within the query and within max. */
	if (http_query_u64(req->query, req->query_len, "us", QUERY_MAX, &v) == 0)
		ENSURE(v <= QUERY_MAX, "http_query_u64 result <= max");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct http_request req;
	int ret = http_parse_request(buf, size, &req);

	check(buf, size, ret, &req);
	if (ret > 0) {
		/* Pipelining: parse again from the returned offset. */
		size_t off = (size_t)ret;
		struct http_request next;
		int r2 = http_parse_request(buf + off, size - off, &next);

		check(buf + off, size - off, r2, &next);

		/* And where a server would really look: after the body. */
		if (req.content_length > 0 && req.content_length <= size - off) {
			off += (size_t)req.content_length;
			r2 = http_parse_request(buf + off, size - off, &next);
			check(buf + off, size - off, r2, &next);
		}
	}
	return 0;
}
