/* test_http.c: unit tests for the request-head parser in servers/http.c.
 *
 * No framework: each CHECK counts a pass or prints a failure naming its case,
 * and the last line is "N passed, N failed in N cases" (exit 1 if any failed;
 * check.h's RUN counts each case, and one that ran no check fails).
 *
 * Every input handed to the parser is copied so that it ends exactly at a
 * PROT_NONE guard page (as picohttpparser's tests do), and the data pages are
 * made read-only, so any read past buf[len - 1] or any write into the buffer
 * crashes instead of passing silently.
 *
 * Build:
 *   gcc -Wall -Wextra -Werror -O1 -g -std=gnu11 -D_GNU_SOURCE \
 *       -fsanitize=address,undefined -fno-sanitize-recover=all \
 *       -Iservers tests/c/test_http.c servers/http.c -o build/test_http
 */
#include "http.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

/* Parses data[0..len) placed against a guard page; returns the result.
 * The copy stays mapped until the next call, so req's pointers can be read. */
static int parse_guarded(const char *data, size_t len, struct http_request *req)
{
	static struct gbuf cur;

	if (cur.map)
		gb_free(&cur);
	cur = gb_make(data, len);
	return http_parse_request(cur.p, len, req);
}

static int span_eq(const char *p, size_t n, const char *lit)
{
	return p != NULL && n == strlen(lit) && memcmp(p, lit, n) == 0;
}

static const char *status_name(int r)
{
	static char buf[32];

	switch (r) {
	case HTTP_PARTIAL: return "HTTP_PARTIAL";
	case HTTP_MALFORMED: return "HTTP_MALFORMED";
	case HTTP_TOO_LARGE: return "HTTP_TOO_LARGE";
	default:
		snprintf(buf, sizeof(buf), "%d", r);
		return buf;
	}
}

/* Expects http_parse_request(data, len) == want. */
static void expect_status(const char *name, const char *data, size_t len, int want)
{
	struct http_request req;
	int r = parse_guarded(data, len, &req);
	char gotname[32];

	snprintf(gotname, sizeof(gotname), "%s", status_name(r));
	CHECK(r == want, "%s: got %s, want %s", name, gotname, status_name(want));
}

/* ---- the cases --------------------------------------------------------- */

static void test_simple_get(void)
{
	static const char in[] = "GET /index.html HTTP/1.1\r\nHost: example.com\r\nUser-Agent: t\r\n\r\n";
	struct gbuf g = gb_make(in, sizeof(in) - 1);
	struct http_request req;
	int r = http_parse_request(g.p, g.len, &req);

	CHECK(r == (int)(sizeof(in) - 1), "simple GET: length %d, want %zu", r, sizeof(in) - 1);
	CHECK(span_eq(req.method, req.method_len, "GET"), "simple GET: method");
	CHECK(req.method == g.p, "simple GET: method points at buf[0]");
	CHECK(span_eq(req.path, req.path_len, "/index.html"), "simple GET: path");
	CHECK(req.path == g.p + 4, "simple GET: path points into buf");
	CHECK(req.query == NULL && req.query_len == 0, "simple GET: no query");
	CHECK(req.minor_version == 1, "simple GET: minor_version %d", req.minor_version);
	CHECK(req.keep_alive == 1, "simple GET: keep_alive %d", req.keep_alive);
	CHECK(req.content_length == 0, "simple GET: content_length %llu",
	      (unsigned long long)req.content_length);
	gb_free(&g);

	/* A head with no header fields at all. */
	{
		struct http_request rq;
		r = parse_guarded(L("GET / HTTP/1.1\r\n\r\n"), &rq);
		CHECK(r == (int)strlen("GET / HTTP/1.1\r\n\r\n"), "no headers: length %d", r);
		CHECK(span_eq(rq.path, rq.path_len, "/"), "no headers: path");
	}
	/* Other methods and target forms. */
	{
		struct http_request rq;
		r = parse_guarded(L("OPTIONS * HTTP/1.1\r\n\r\n"), &rq);
		CHECK(r == (int)strlen("OPTIONS * HTTP/1.1\r\n\r\n"), "OPTIONS *: length %d", r);
		CHECK(span_eq(rq.method, rq.method_len, "OPTIONS"), "OPTIONS *: method");
		CHECK(span_eq(rq.path, rq.path_len, "*"), "OPTIONS *: path");

		r = parse_guarded(L("M-SEARCH! /x HTTP/1.1\r\n\r\n"), &rq);
		CHECK(r > 0 && span_eq(rq.method, rq.method_len, "M-SEARCH!"),
		      "tchar method M-SEARCH!: %s", status_name(r));

		r = parse_guarded(L("GET http://h/a?b=1 HTTP/1.1\r\n\r\n"), &rq);
		CHECK(r > 0 && span_eq(rq.path, rq.path_len, "http://h/a") &&
		      span_eq(rq.query, rq.query_len, "b=1"),
		      "absolute-form target: %s", status_name(r));
	}
	/* Body bytes after the head are not part of the returned length. */
	{
		static const char body[] = "POST /u HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello";
		struct http_request rq;
		r = parse_guarded(L(body), &rq);
		CHECK(r == (int)(sizeof(body) - 1 - 5), "POST with body: length %d, want %zu",
		      r, sizeof(body) - 1 - 5);
		CHECK(rq.content_length == 5, "POST with body: content_length %llu",
		      (unsigned long long)rq.content_length);
	}
	/* Header values: OWS trimmed, tab and obs-text inside allowed, empty allowed. */
	EXPECT_WHOLE("value with inner tab", "GET / HTTP/1.1\r\nX-A: a\tb\r\n\r\n");
	EXPECT_WHOLE("value with obs-text", "GET / HTTP/1.1\r\nX-A: caf\xc3\xa9\r\n\r\n");
	EXPECT_WHOLE("empty value", "GET / HTTP/1.1\r\nX-Empty:\r\n\r\n");
	EXPECT_WHOLE("empty value, only OWS", "GET / HTTP/1.1\r\nX-Empty: \t \r\n\r\n");
	expect_status("zero-length input", "", 0, HTTP_PARTIAL);
}

static void test_pipelined(void)
{
	static const char a[] = "GET /first HTTP/1.1\r\nHost: h\r\n\r\n";
	static const char b[] = "GET /second?x=1 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
	char in[sizeof(a) + sizeof(b)];
	size_t la = sizeof(a) - 1, lb = sizeof(b) - 1;
	struct gbuf g;
	struct http_request req;
	int r;

	memcpy(in, a, la);
	memcpy(in + la, b, lb);
	g = gb_make(in, la + lb);

	r = http_parse_request(g.p, g.len, &req);
	CHECK(r == (int)la, "pipelined: first length %d, want %zu", r, la);
	CHECK(span_eq(req.path, req.path_len, "/first"), "pipelined: first path");
	CHECK(req.keep_alive == 1, "pipelined: first keep_alive");
	if (r > 0) {
		r = http_parse_request(g.p + r, g.len - (size_t)r, &req);
		CHECK(r == (int)lb, "pipelined: second length %d, want %zu", r, lb);
		CHECK(span_eq(req.path, req.path_len, "/second"), "pipelined: second path");
		CHECK(span_eq(req.query, req.query_len, "x=1"), "pipelined: second query");
		CHECK(req.keep_alive == 0, "pipelined: second keep_alive");
	}
	gb_free(&g);

	/* Second request incomplete: first still parses, second is partial. */
	g = gb_make(in, la + lb - 3);
	r = http_parse_request(g.p, g.len, &req);
	CHECK(r == (int)la, "pipelined, truncated second: first length %d", r);
	if (r > 0) {
		r = http_parse_request(g.p + r, g.len - (size_t)r, &req);
		CHECK(r == HTTP_PARTIAL, "pipelined, truncated second: second %s",
		      status_name(r));
	}
	gb_free(&g);
}

/* Every proper prefix of a valid head is HTTP_PARTIAL; the whole returns len. */
static void check_all_prefixes(const char *name, const char *in, size_t len)
{
	size_t k;
	int bad = 0;
	struct http_request req;

	for (k = 0; k < len; k++) {
		int r = parse_guarded(in, k, &req);
		if (r != HTTP_PARTIAL) {
			bad++;
			CHECK(0, "prefixes of %s: prefix of %zu bytes gave %s, want HTTP_PARTIAL",
			      name, k, status_name(r));
		}
	}
	CHECK(bad == 0, "prefixes of %s: all %zu proper prefixes HTTP_PARTIAL", name, len);
	{
		int r = parse_guarded(in, len, &req);
		CHECK(r == (int)len, "prefixes of %s: whole head gave %s, want %zu",
		      name, status_name(r), len);
	}
}

static void test_prefixes(void)
{
	check_all_prefixes("CRLF GET",
			   L("GET /a/b?c=1&d=2 HTTP/1.1\r\nHost: example.com\r\n"
			     "Connection: keep-alive\r\nContent-Length: 12\r\n\r\n"));
	check_all_prefixes("bare-LF GET", L("GET /x HTTP/1.0\nHost: h\nX-Y: z\n\n"));
	check_all_prefixes("mixed line ends", L("GET /x HTTP/1.1\r\nHost: h\nX-Y: z\r\n\n"));
	check_all_prefixes("leading empty lines", L("\r\n\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"));
	check_all_prefixes("no headers", L("GET / HTTP/1.1\r\n\r\n"));
}

static void test_line_endings(void)
{
	static const char lf[] = "GET /lf HTTP/1.1\nHost: h\nConnection: close\n\n";
	static const char lf0[] = "GET /lf HTTP/1.1\n\n";
	static const char lead_crlf[] = "\r\n\r\nGET /lead HTTP/1.1\r\n\r\n";
	static const char lead_lf[] = "\n\nGET /lead HTTP/1.1\n\n";
	struct http_request req;
	struct gbuf g;
	int r;

	r = parse_guarded(L(lf), &req);
	CHECK(r == (int)(sizeof(lf) - 1), "bare LF: length %d, want %zu", r, sizeof(lf) - 1);
	CHECK(span_eq(req.path, req.path_len, "/lf"), "bare LF: path");
	CHECK(req.minor_version == 1, "bare LF: minor_version");
	CHECK(req.keep_alive == 0, "bare LF: Connection: close seen");

	r = parse_guarded(L(lf0), &req);
	CHECK(r == (int)(sizeof(lf0) - 1), "bare LF, no headers: length %d", r);

	/* Leading empty lines are skipped but counted in the head's length. */
	g = gb_make(L(lead_crlf));
	r = http_parse_request(g.p, g.len, &req);
	CHECK(r == (int)(sizeof(lead_crlf) - 1), "leading CRLF lines: length %d, want %zu", r,
	      sizeof(lead_crlf) - 1);
	CHECK(req.method == g.p + 4 && span_eq(req.method, req.method_len, "GET"),
	      "leading CRLF lines: method after the empty lines");
	CHECK(span_eq(req.path, req.path_len, "/lead"), "leading CRLF lines: path");
	gb_free(&g);

	r = parse_guarded(L(lead_lf), &req);
	CHECK(r == (int)(sizeof(lead_lf) - 1), "leading LF lines: length %d, want %zu", r,
	      sizeof(lead_lf) - 1);
	CHECK(span_eq(req.path, req.path_len, "/lead"), "leading LF lines: path");

	expect_status("only empty lines", L("\r\n\r\n\n"), HTTP_PARTIAL);
}

static void test_query(void)
{
	struct http_request req;
	int r;

	r = parse_guarded(L("GET /search?q=abc&n=10 HTTP/1.1\r\n\r\n"), &req);
	CHECK(r > 0, "query: parsed (%s)", status_name(r));
	CHECK(span_eq(req.path, req.path_len, "/search"), "query: path is '/search'");
	CHECK(span_eq(req.query, req.query_len, "q=abc&n=10"), "query: query is 'q=abc&n=10'");

	r = parse_guarded(L("GET /plain HTTP/1.1\r\n\r\n"), &req);
	CHECK(r > 0 && req.query == NULL && req.query_len == 0,
	      "no '?': query NULL, query_len 0");
	CHECK(span_eq(req.path, req.path_len, "/plain"), "no '?': path");

	r = parse_guarded(L("GET /empty? HTTP/1.1\r\n\r\n"), &req);
	CHECK(r > 0 && req.query != NULL && req.query_len == 0,
	      "trailing '?': query non-NULL, empty");
	CHECK(span_eq(req.path, req.path_len, "/empty"), "trailing '?': path");

	r = parse_guarded(L("GET /a?b?c HTTP/1.1\r\n\r\n"), &req);
	CHECK(span_eq(req.path, req.path_len, "/a") && span_eq(req.query, req.query_len, "b?c"),
	      "two '?': split at the first");

	r = parse_guarded(L("GET ?x=1 HTTP/1.1\r\n\r\n"), &req);
	CHECK(r > 0 && req.path_len == 0 && span_eq(req.query, req.query_len, "x=1"),
	      "target starting with '?': empty path, query 'x=1' (%s)", status_name(r));
}

static void test_keep_alive(void)
{
	static const struct {
		const char *name, *in;
		int want;
	} cases[] = {
		{ "1.0 default close", "GET / HTTP/1.0\r\nHost: h\r\n\r\n", 0 },
		{ "1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 1 },
		{ "1.0 Keep-Alive mixed case", "GET / HTTP/1.0\r\nconnection: Keep-Alive\r\n\r\n", 1 },
		{ "1.0 keep-alive, close", "GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", 0 },
		{ "1.0 close", "GET / HTTP/1.0\r\nConnection: close\r\n\r\n", 0 },
		{ "1.0 keep-alive in a list", "GET / HTTP/1.0\r\nConnection: Upgrade ,keep-alive \r\n\r\n", 1 },
		{ "1.1 default keep-alive", "GET / HTTP/1.1\r\nHost: h\r\n\r\n", 1 },
		{ "1.1 close", "GET / HTTP/1.1\r\nConnection: close\r\n\r\n", 0 },
		{ "1.1 foo, Close", "GET / HTTP/1.1\r\nConnection: foo, Close\r\n\r\n", 0 },
		{ "1.1 CLOSE uppercase", "GET / HTTP/1.1\r\nCONNECTION: CLOSE\r\n\r\n", 0 },
		{ "1.1 close in second header", "GET / HTTP/1.1\r\nConnection: foo\r\nConnection: close\r\n\r\n", 0 },
		{ "1.1 'closed' is not close", "GET / HTTP/1.1\r\nConnection: closed\r\n\r\n", 1 },
		{ "1.1 'close' as another header's value", "GET / HTTP/1.1\r\nX-Connection: close\r\n\r\n", 1 },
		{ "1.1 keep-alive", "GET / HTTP/1.1\r\nConnection: keep-alive\r\n\r\n", 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct http_request req;
		int r = parse_guarded(cases[i].in, strlen(cases[i].in), &req);
		CHECK(r == (int)strlen(cases[i].in), "keep-alive '%s': parse gave %s",
		      cases[i].name, status_name(r));
		CHECK(req.keep_alive == cases[i].want, "keep-alive '%s': keep_alive %d, want %d",
		      cases[i].name, req.keep_alive, cases[i].want);
	}
	{
		struct http_request req;
		parse_guarded(L("GET / HTTP/1.0\r\n\r\n"), &req);
		CHECK(req.minor_version == 0, "HTTP/1.0: minor_version %d", req.minor_version);
	}
}

static void expect_length(const char *name, const char *in, size_t len, uint64_t want)
{
	struct http_request req;
	int r = parse_guarded(in, len, &req);

	CHECK(r == (int)len, "%s: parse gave %s, want %zu", name, status_name(r), len);
	CHECK(req.content_length == want, "%s: content_length %llu, want %llu", name,
	      (unsigned long long)req.content_length, (unsigned long long)want);
}

static void test_content_length(void)
{
	expect_length("Content-Length 42", L("POST / HTTP/1.1\r\nContent-Length: 42\r\n\r\n"), 42);
	expect_length("Content-Length 0", L("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n"), 0);
	expect_length("content-length lowercase, OWS",
		      L("POST / HTTP/1.1\r\ncontent-LENGTH:\t 7 \t\r\n\r\n"), 7);
	expect_length("Content-Length UINT64_MAX",
		      L("POST / HTTP/1.1\r\nContent-Length: 18446744073709551615\r\n\r\n"),
		      UINT64_MAX);
	expect_length("Content-Length 20 digits with leading zeros",
		      L("POST / HTTP/1.1\r\nContent-Length: 00000000000000000009\r\n\r\n"), 9);
	expect_length("duplicate identical Content-Length",
		      L("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"), 5);

	expect_status("conflicting duplicate Content-Length",
		      L("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"),
		      HTTP_MALFORMED);
	expect_status("conflicting Content-Length, 0 first",
		      L("POST / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 1\r\n\r\n"),
		      HTTP_MALFORMED);
	expect_status("Content-Length non-numeric",
		      L("POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n"), HTTP_MALFORMED);
	expect_status("Content-Length digits then junk",
		      L("POST / HTTP/1.1\r\nContent-Length: 12x\r\n\r\n"), HTTP_MALFORMED);
	expect_status("Content-Length negative",
		      L("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("Content-Length plus sign",
		      L("POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n"), HTTP_MALFORMED);
	expect_status("Content-Length hex",
		      L("POST / HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n"), HTTP_MALFORMED);
	expect_status("Content-Length list '5, 5'",
		      L("POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n"), HTTP_MALFORMED);
	expect_status("Content-Length inner space",
		      L("POST / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n"), HTTP_MALFORMED);
	expect_status("Content-Length empty",
		      L("POST / HTTP/1.1\r\nContent-Length:\r\n\r\n"), HTTP_MALFORMED);
	expect_status("Content-Length 21 digits (leading zeros)",
		      L("POST / HTTP/1.1\r\nContent-Length: 000000000000000000001\r\n\r\n"),
		      HTTP_MALFORMED);
	expect_status("Content-Length 25 digits",
		      L("POST / HTTP/1.1\r\nContent-Length: 1234567890123456789012345\r\n\r\n"),
		      HTTP_MALFORMED);
	expect_status("Content-Length UINT64_MAX + 1",
		      L("POST / HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n"),
		      HTTP_MALFORMED);
	expect_status("Content-Length 20 nines",
		      L("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n"),
		      HTTP_MALFORMED);

	expect_status("Transfer-Encoding chunked",
		      L("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), HTTP_MALFORMED);
	expect_status("transfer-encoding lowercase identity",
		      L("POST / HTTP/1.1\r\ntransfer-encoding: identity\r\n\r\n"), HTTP_MALFORMED);
	expect_status("Transfer-Encoding with Content-Length",
		      L("POST / HTTP/1.1\r\nContent-Length: 3\r\nTRANSFER-ENCODING: chunked\r\n\r\n"),
		      HTTP_MALFORMED);
	expect_status("Transfer-Encoding empty value",
		      L("POST / HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n"), HTTP_MALFORMED);
}

static void test_bad_request_line(void)
{
	expect_status("missing version", L("GET /\r\n\r\n"), HTTP_MALFORMED);
	expect_status("missing target and version", L("GET\r\n\r\n"), HTTP_MALFORMED);
	expect_status("HTTP/2.0", L("GET / HTTP/2.0\r\n\r\n"), HTTP_MALFORMED);
	expect_status("HTTP/1.2", L("GET / HTTP/1.2\r\n\r\n"), HTTP_MALFORMED);
	expect_status("HTTP/1.10", L("GET / HTTP/1.10\r\n\r\n"), HTTP_MALFORMED);
	expect_status("HTTP/1", L("GET / HTTP/1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("HTTP/0.9", L("GET / HTTP/0.9\r\n\r\n"), HTTP_MALFORMED);
	expect_status("lowercase http/1.1", L("GET / http/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("space in method", L("GE T / HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("leading space before method", L(" GET / HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("empty target (two spaces)", L("GET  HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("empty target (double space)", L("GET  / HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("space in target", L("GET /a b HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("two spaces before version", L("GET /  HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("trailing space after version", L("GET / HTTP/1.1 \r\n\r\n"), HTTP_MALFORMED);
	expect_status("junk after version", L("GET / HTTP/1.1 x\r\n\r\n"), HTTP_MALFORMED);
	expect_status("double CR after version", L("GET / HTTP/1.1\r\r\n\r\n"), HTTP_MALFORMED);
	expect_status("control char 0x01 in target", L("GET /a\x01z HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("DEL in target", L("GET /a\x7fz HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("CR in target", L("GET /a\rz HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("8-bit byte in target", L("GET /\xc3\xa9 HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("tab between method and target", L("GET\t/ HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("tab between target and version", L("GET /\tHTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("tab in target", L("GET /a\tb HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("NUL in method", L("G\0T / HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("NUL after method", L("GET\0/ HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("NUL in target", L("GET /a\0b HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("NUL in version", L("GET / HTTP/1.\0\r\n\r\n"), HTTP_MALFORMED);
	expect_status("NUL at start", L("\0GET / HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("non-tchar method '/'", L("/ / HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("non-tchar method '('", L("GE(T / HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("request line of only version", L("HTTP/1.1\r\n\r\n"), HTTP_MALFORMED);
	/* Malformed is decided on the first complete line, without waiting for the rest. */
	expect_status("malformed line, head incomplete", L("GET / HTTP/2.0\r\nHost: h\r\n"),
		      HTTP_MALFORMED);
}

static void test_bad_headers(void)
{
	expect_status("header without colon", L("GET / HTTP/1.1\r\nHost example.com\r\n\r\n"),
		      HTTP_MALFORMED);
	expect_status("header name, space before colon", L("GET / HTTP/1.1\r\nHost : h\r\n\r\n"),
		      HTTP_MALFORMED);
	expect_status("header name, tab before colon", L("GET / HTTP/1.1\r\nHost\t: h\r\n\r\n"),
		      HTTP_MALFORMED);
	expect_status("space in header name", L("GET / HTTP/1.1\r\nX A: h\r\n\r\n"), HTTP_MALFORMED);
	expect_status("empty header name", L("GET / HTTP/1.1\r\n: h\r\n\r\n"), HTTP_MALFORMED);
	expect_status("header line starting with space", L("GET / HTTP/1.1\r\n Host: h\r\n\r\n"),
		      HTTP_MALFORMED);
	expect_status("obs-fold continuation (space)",
		      L("GET / HTTP/1.1\r\nX-A: one\r\n  two\r\n\r\n"), HTTP_MALFORMED);
	expect_status("obs-fold continuation (tab)",
		      L("GET / HTTP/1.1\r\nX-A: one\r\n\ttwo\r\n\r\n"), HTTP_MALFORMED);
	expect_status("control char 0x01 in value", L("GET / HTTP/1.1\r\nX-A: a\x01z\r\n\r\n"),
		      HTTP_MALFORMED);
	expect_status("DEL in value", L("GET / HTTP/1.1\r\nX-A: a\x7fz\r\n\r\n"), HTTP_MALFORMED);
	expect_status("NUL in value", L("GET / HTTP/1.1\r\nX-A: a\0z\r\n\r\n"), HTTP_MALFORMED);
	expect_status("bare CR in value", L("GET / HTTP/1.1\r\nX-A: a\rz\r\n\r\n"), HTTP_MALFORMED);
	expect_status("value ending in CR CR LF", L("GET / HTTP/1.1\r\nX-A: a\r\r\n\r\n"),
		      HTTP_MALFORMED);
	expect_status("NUL in header name", L("GET / HTTP/1.1\r\nX\0A: 1\r\n\r\n"), HTTP_MALFORMED);
	expect_status("8-bit byte in header name", L("GET / HTTP/1.1\r\nX\xc3\xa9: 1\r\n\r\n"),
		      HTTP_MALFORMED);
	expect_status("bad header after a good one",
		      L("GET / HTTP/1.1\r\nHost: h\r\nBroken\r\n\r\n"), HTTP_MALFORMED);
	/* The bad line is refused as soon as it is complete. */
	expect_status("bad header, head incomplete", L("GET / HTTP/1.1\r\nBroken\r\nHost: h"),
		      HTTP_MALFORMED);
}

/* Builds "GET / HTTP/1.1\r\nX-Pad: <pad>\r\n\r\n" of exactly total bytes. */
static char *head_of_size(size_t total)
{
	static const char pre[] = "GET / HTTP/1.1\r\nX-Pad: ", post[] = "\r\n\r\n";
	size_t lp = sizeof(pre) - 1, lq = sizeof(post) - 1;
	char *s = malloc(total + 1);

	if (!s || total < lp + lq + 1)
		abort();
	memcpy(s, pre, lp);
	memset(s + lp, 'a', total - lp - lq);
	memcpy(s + total - lq, post, lq);
	s[total] = '\0';
	return s;
}

static void test_limits(void)
{
	struct http_request req;
	char *s;
	int r;

	/* Exactly HTTP_MAX_HEAD bytes: accepted. */
	s = head_of_size(HTTP_MAX_HEAD);
	r = parse_guarded(s, HTTP_MAX_HEAD, &req);
	CHECK(r == HTTP_MAX_HEAD, "head of exactly %d bytes: got %s, want %d", HTTP_MAX_HEAD,
	      status_name(r), HTTP_MAX_HEAD);
	/* Its last proper prefix is still partial. */
	r = parse_guarded(s, HTTP_MAX_HEAD - 1, &req);
	CHECK(r == HTTP_PARTIAL, "head of %d bytes minus its last byte: got %s", HTTP_MAX_HEAD,
	      status_name(r));
	free(s);

	/* Exactly the limit followed by body bytes: still accepted, body excluded. */
	{
		size_t total = HTTP_MAX_HEAD + 100;
		char *t = malloc(total);
		s = head_of_size(HTTP_MAX_HEAD);
		memcpy(t, s, HTTP_MAX_HEAD);
		memset(t + HTTP_MAX_HEAD, 'b', 100);
		r = parse_guarded(t, total, &req);
		CHECK(r == HTTP_MAX_HEAD, "head of exactly the limit plus 100 body bytes: got %s",
		      status_name(r));
		free(t);
		free(s);
	}

	/* One byte over: too large, however much data is there. */
	s = head_of_size(HTTP_MAX_HEAD + 1);
	r = parse_guarded(s, HTTP_MAX_HEAD + 1, &req);
	CHECK(r == HTTP_TOO_LARGE, "head of %d bytes (one over): got %s, want HTTP_TOO_LARGE",
	      HTTP_MAX_HEAD + 1, status_name(r));
	free(s);

	/* A 9000-byte header value. */
	s = head_of_size(9000 + 23 + 4);
	r = parse_guarded(s, strlen(s), &req);
	CHECK(r == HTTP_TOO_LARGE, "9000-byte header value: got %s, want HTTP_TOO_LARGE",
	      status_name(r));
	/* The same head cut short of the limit is only partial... */
	r = parse_guarded(s, HTTP_MAX_HEAD - 1, &req);
	CHECK(r == HTTP_PARTIAL, "partial head of %d bytes: got %s, want HTTP_PARTIAL",
	      HTTP_MAX_HEAD - 1, status_name(r));
	r = parse_guarded(s, 100, &req);
	CHECK(r == HTTP_PARTIAL, "partial head of 100 bytes: got %s", status_name(r));
	/* ...and once >= HTTP_MAX_HEAD bytes hold no end of head, too large. */
	r = parse_guarded(s, HTTP_MAX_HEAD, &req);
	CHECK(r == HTTP_TOO_LARGE, "partial head of exactly %d bytes: got %s, want HTTP_TOO_LARGE",
	      HTTP_MAX_HEAD, status_name(r));
	r = parse_guarded(s, HTTP_MAX_HEAD + 1, &req);
	CHECK(r == HTTP_TOO_LARGE, "partial head of %d bytes: got %s, want HTTP_TOO_LARGE",
	      HTTP_MAX_HEAD + 1, status_name(r));
	free(s);

	/* A request line longer than the limit (no newline anywhere). */
	{
		size_t n = 10000;
		char *t = malloc(n);
		memcpy(t, "GET /", 5);
		memset(t + 5, 'x', n - 5);
		r = parse_guarded(t, n, &req);
		CHECK(r == HTTP_TOO_LARGE, "10000-byte request line: got %s", status_name(r));
		r = parse_guarded(t, 5000, &req);
		CHECK(r == HTTP_PARTIAL, "5000-byte unterminated request line: got %s",
		      status_name(r));
		free(t);
	}

	/* Leading empty lines count toward the limit. */
	{
		static const char req_s[] = "GET / HTTP/1.1\r\n\r\n";
		size_t lr = sizeof(req_s) - 1, lead = HTTP_MAX_HEAD - lr;
		char *t = malloc(HTTP_MAX_HEAD + 1);
		memset(t, '\n', lead);
		memcpy(t + lead, req_s, lr);
		r = parse_guarded(t, HTTP_MAX_HEAD, &req);
		CHECK(r == HTTP_MAX_HEAD, "leading LFs + request = %d bytes: got %s",
		      HTTP_MAX_HEAD, status_name(r));
		memset(t, '\n', lead + 1);
		memcpy(t + lead + 1, req_s, lr);
		r = parse_guarded(t, HTTP_MAX_HEAD + 1, &req);
		CHECK(r == HTTP_TOO_LARGE, "leading LFs + request = %d bytes: got %s",
		      HTTP_MAX_HEAD + 1, status_name(r));
		memset(t, '\n', HTTP_MAX_HEAD);
		r = parse_guarded(t, HTTP_MAX_HEAD, &req);
		CHECK(r == HTTP_TOO_LARGE, "%d bytes of only LF: got %s", HTTP_MAX_HEAD,
		      status_name(r));
		r = parse_guarded(t, 100, &req);
		CHECK(r == HTTP_PARTIAL, "100 bytes of only LF: got %s", status_name(r));
		free(t);
	}
}

/* http_query_u64 on q placed against a guard page. */
static int query_guarded(const char *q, size_t n, const char *key, uint64_t max, uint64_t *out)
{
	struct gbuf g = gb_make(q, n);
	int r = http_query_u64(g.p, n, key, max, out);
	gb_free(&g);
	return r;
}

static void expect_query(const char *name, const char *q, size_t n, const char *key,
			 uint64_t max, int want_r, uint64_t want_v)
{
	uint64_t v = 0xdeadbeef;
	int r = query_guarded(q, n, key, max, &v);

	if (want_r == 0)
		CHECK(r == 0 && v == want_v, "http_query_u64 %s: got r=%d v=%llu, want 0 and %llu",
		      name, r, (unsigned long long)v, (unsigned long long)want_v);
	else
		CHECK(r == -1, "http_query_u64 %s: got r=%d v=%llu, want -1", name, r,
		      (unsigned long long)v);
}

static void test_query_u64(void)
{
	uint64_t v = 7;

	expect_query("present", L("us=250"), "us", 1000, 0, 250);
	expect_query("present, zero", L("us=0"), "us", 1000, 0, 0);
	expect_query("absent", L("a=1&b=2"), "us", 1000, -1, 0);
	expect_query("empty query", "", 0, "us", 1000, -1, 0);
	expect_query("empty value", L("us="), "us", 1000, -1, 0);
	expect_query("empty value, then another", L("us=&x=1"), "us", 1000, -1, 0);
	expect_query("key without '='", L("us"), "us", 1000, -1, 0);
	expect_query("non-digit value", L("us=abc"), "us", 1000, -1, 0);
	expect_query("digits then junk", L("us=12x"), "us", 1000, -1, 0);
	expect_query("negative", L("us=-1"), "us", 1000, -1, 0);
	expect_query("plus sign", L("us=+1"), "us", 1000, -1, 0);
	expect_query("space before value", L("us= 1"), "us", 1000, -1, 0);
	expect_query("equal to max", L("us=1000"), "us", 1000, 0, 1000);
	expect_query("over max by one", L("us=1001"), "us", 1000, -1, 0);
	expect_query("far over max", L("us=99999999"), "us", 1000, -1, 0);
	expect_query("UINT64_MAX with max UINT64_MAX", L("us=18446744073709551615"), "us",
		     UINT64_MAX, 0, UINT64_MAX);
	expect_query("UINT64_MAX + 1", L("us=18446744073709551616"), "us", UINT64_MAX, -1, 0);
	expect_query("21 digits", L("us=000000000000000000001"), "us", UINT64_MAX, -1, 0);
	/* Contract: the value must lie in [0, max] for every max, small ones included. */
	expect_query("max 0, value 0", L("us=0"), "us", 0, 0, 0);
	expect_query("max 0, value 1", L("us=1"), "us", 0, -1, 0);
	expect_query("max 5, value 7", L("us=7"), "us", 5, -1, 0);
	expect_query("max 5, value 57", L("us=57"), "us", 5, -1, 0);
	expect_query("max 5, value 5", L("us=5"), "us", 5, 0, 5);
	expect_query("max 15, value 9", L("us=9"), "us", 15, 0, 9);
	expect_query("max 15, value 16", L("us=16"), "us", 15, -1, 0);
	/* Keys are matched whole, not by prefix. */
	expect_query("'u' with 'us' first", L("us=7&u=3"), "u", 1000, 0, 3);
	expect_query("'us' with 'u' first", L("u=3&us=7"), "us", 1000, 0, 7);
	expect_query("'us' absent, only 'u'", L("u=3"), "us", 1000, -1, 0);
	expect_query("'us' absent, only 'usx'", L("usx=3"), "us", 1000, -1, 0);
	expect_query("'us' absent, only 'xus'", L("xus=3"), "us", 1000, -1, 0);
	expect_query("'u' absent, only 'us'", L("us=3"), "u", 1000, -1, 0);
	expect_query("key is case-sensitive", L("US=3"), "us", 1000, -1, 0);
	/* Several keys. */
	expect_query("last of several", L("a=1&b=2&us=3"), "us", 1000, 0, 3);
	expect_query("first of several", L("us=4&a=1&b=2"), "us", 1000, 0, 4);
	expect_query("middle of several", L("a=1&us=5&b=2"), "us", 1000, 0, 5);
	expect_query("other keys", L("a=1&b=22&us=3"), "b", 1000, 0, 22);
	expect_query("empty segments", L("&&us=6&&"), "us", 1000, 0, 6);
	expect_query("key without '=' then real key", L("us&us=8"), "us", 1000, 0, 8);
	expect_query("first occurrence wins", L("us=1&us=2"), "us", 1000, 0, 1);
	/* query_len bounds the search: "us=12" cut to 4 bytes is "us=1". */
	expect_query("query_len cuts the value", "us=12", 4, "us", 1000, 0, 1);
	expect_query("query_len cuts the key", "us=12", 2, "us", 1000, -1, 0);

	CHECK(http_query_u64(NULL, 0, "us", 1000, &v) == -1, "http_query_u64 NULL query: -1");
	CHECK(v == 7, "http_query_u64 NULL query: *out untouched");

	/* On a parsed request: query NULL when there is no '?'. */
	{
		struct http_request req;
		static const char in[] = "GET /sleep?us=1500&u=2 HTTP/1.1\r\n\r\n";
		struct gbuf g = gb_make(in, sizeof(in) - 1);
		int r = http_parse_request(g.p, g.len, &req);
		uint64_t got = 0;
		CHECK(r > 0 && http_query_u64(req.query, req.query_len, "us", 1000000, &got) == 0 &&
		      got == 1500, "http_query_u64 on a parsed target: us=%llu",
		      (unsigned long long)got);
		CHECK(http_query_u64(req.query, req.query_len, "u", 1000000, &got) == 0 && got == 2,
		      "http_query_u64 on a parsed target: u=%llu", (unsigned long long)got);
		gb_free(&g);
	}
}

static void test_reason(void)
{
	const char *u = http_reason(999);

	CHECK(strcmp(http_reason(200), "OK") == 0, "http_reason(200) = '%s'", http_reason(200));
	CHECK(strcmp(http_reason(400), "Bad Request") == 0, "http_reason(400) = '%s'",
	      http_reason(400));
	CHECK(strcmp(http_reason(431), "Request Header Fields Too Large") == 0,
	      "http_reason(431) = '%s'", http_reason(431));
	CHECK(u != NULL && u[0] != '\0', "http_reason(999) is a non-empty string");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);

	RUN(test_simple_get);
	RUN(test_pipelined);
	RUN(test_prefixes);
	RUN(test_line_endings);
	RUN(test_query);
	RUN(test_keep_alive);
	RUN(test_content_length);
	RUN(test_bad_request_line);
	RUN(test_bad_headers);
	RUN(test_limits);
	RUN(test_query_u64);
	RUN(test_reason);

	return check_summary();
}
