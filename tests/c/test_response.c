/* test_response.c: unit tests for the probe's response parsers
 * (probes/response.c). The probe's counts are only as good as these: they
 * must find each answer's worker id (resp_parse) and where any answer ends
 * (resp_parse, and resp_framer for --worker-from none), so that pipelined
 * and keep-alive answers are never merged or split. Inputs sit against a
 * guard page (check.h), so an over-read crashes; the framer is fed each
 * input split at every point, and byte by byte, each piece on its own
 * guard page. */
#include "response.h"

#include "check.h"

#define L(s) (s), (sizeof(s) - 1)

static int parse(const char *data, size_t len, const char *want, struct http_response *r)
{
	static struct gbuf cur;

	if (cur.map)
		gb_free(&cur);
	cur = gb_make(data, len);
	return resp_parse(cur.p, len, want, r);
}

static void test_simple(void)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Worker: 1\r\n\r\n4242\n";
	struct http_response r;
	int rc = parse(L(ok), "x-worker", &r);

	CHECK(rc == (int)sizeof(ok) - 1, "simple: whole length, got %d", rc);
	CHECK(r.status == 200, "simple: status %d", r.status);
	CHECK(r.body_len == 5 && memcmp(r.body, "4242\n", 5) == 0, "simple: body");
	CHECK(r.header && r.header_len == 1 && r.header[0] == '1', "simple: X-Worker found case-insensitively");
	CHECK(!r.close, "simple: keep-alive by default");
}

static void test_every_prefix_partial(void)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\n4242\n";
	struct http_response r;

	for (size_t n = 0; n < sizeof(ok) - 1; n++) {
		int rc = parse(ok, n, NULL, &r);
		CHECK(rc == RESP_PARTIAL, "prefix %zu: expected PARTIAL, got %d", n, rc);
	}
	CHECK(parse(L(ok), NULL, &r) > 0 && r.close, "Connection: close seen");
}

static void test_pipelined(void)
{
	static const char two[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nA\n"
				  "HTTP/1.1 404 Not Found\r\ncontent-length: 3\r\n\r\nno\n";
	struct http_response r;
	int first = parse(L(two), NULL, &r);

	CHECK(first == 40, "pipelined: first answer (17 + 19 + 2 + 2 bytes) ends at 40, got %d", first);
	CHECK(r.body_len == 2 && r.body[0] == 'A', "pipelined: first body");
	if (first > 0) {
		int second = parse(two + first, sizeof(two) - 1 - (size_t)first, NULL, &r);
		CHECK(second == (int)(sizeof(two) - 1) - first && r.status == 404,
		      "pipelined: second answer, got %d status %d", second, r.status);
	}
}

static void test_malformed(void)
{
	struct http_response r;

	CHECK(parse(L("HTTP/1.1 200 OK\r\n\r\n"), NULL, &r) == RESP_MALFORMED, "no Content-Length");
	CHECK(parse(L("HTTX/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), NULL, &r) == RESP_MALFORMED, "bad version");
	CHECK(parse(L("HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n"), NULL, &r) == RESP_MALFORMED, "bad status");
	CHECK(parse(L("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"), NULL, &r) == RESP_MALFORMED, "negative length");
	CHECK(parse(L("HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n"), NULL, &r) == RESP_MALFORMED,
	      "body over RESP_MAX_BODY");
	CHECK(parse(L("HTTP/1.1 200 OK\r\nNoColonHere\r\n\r\n"), NULL, &r) == RESP_MALFORMED, "header without colon");
	CHECK(parse(L("HTTP/1.1 200 OK\r\n: empty-name\r\n\r\n"), NULL, &r) == RESP_MALFORMED, "empty header name");
}

static void test_head_limit(void)
{
	size_t n = RESP_MAX_HEAD + 10;
	char *big = malloc(n);
	struct http_response r;

	memset(big, 'a', n);
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	CHECK(parse(big, n, NULL, &r) == RESP_MALFORMED, "head over RESP_MAX_HEAD is malformed, not partial");
	CHECK(parse(big, 100, NULL, &r) == RESP_PARTIAL, "short unterminated head is partial");
	free(big);
}

static void test_want_header_absent(void)
{
	struct http_response r;
	int rc = parse(L("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Worker-Id: 9\r\n\r\n"), "X-Worker", &r);

	CHECK(rc > 0 && r.header == NULL, "a longer header name does not match X-Worker");
}

/* ---- resp_framer ---------------------------------------------------- */

/* Feeds data[0..len) to a fresh framer in pieces: split at `at` (0: whole),
 * or byte by byte when at is (size_t)-1. Each piece sits on its own guard
 * page. Returns the bytes the response took, or RESP_MALFORMED; stops
 * feeding once it is done. */
static long frame(const char *data, size_t len, size_t at, struct resp_framer *f)
{
	size_t off = 0;
	long took = 0;

	resp_framer_init(f);
	while (off < len && !resp_framer_done(f)) {
		size_t n = at == (size_t)-1 ? 1 : at && off == 0 && at < len ? at : len - off;
		struct gbuf g = gb_make(data + off, n);
		long rc = resp_framer_feed(f, g.p, n);

		gb_free(&g);
		if (rc < 0)
			return rc;
		if (rc > (long)n)
			return -100; /* never: took more than it was given */
		took += rc;
		if ((size_t)rc < n && !resp_framer_done(f))
			return -101; /* never: stopped short without being done */
		off += n;
	}
	return took;
}

/* Frames data every way it can be split; checks each took `want` bytes
 * (RESP_MALFORMED: failed; 0: not done when the bytes ran out), with the
 * status, close and body kind given (when want > 0). */
static void expect_frame(const char *name, const char *data, size_t len, long want, int status, int close,
			 enum resp_body body)
{
	int bad = 0;

	for (size_t at = 0; at <= len; at++) {
		struct resp_framer f;
		long rc = frame(data, len, at == len ? (size_t)-1 : at, &f);
		int done = resp_framer_done(&f);

		if (want == RESP_MALFORMED)
			bad += rc != RESP_MALFORMED;
		else if (want == 0)
			bad += rc != (long)len || done;
		else
			bad += rc != want || !done || f.status != status || f.close != close || f.body != body;
		if (bad) {
			CHECK(0, "%s: split at %zu: took %ld (want %ld), done %d, status %d, close %d, body %d", name,
			      at, rc, want, done, f.status, f.close, (int)f.body);
			return;
		}
	}
	CHECK(1, "%s", name);
}

/* ans is one whole answer, next what follows it on the connection (the
 * next answer's first bytes, or ""): the framer must take exactly ans. */
#define FRAMED(name, ans, next, status, close, body) \
	expect_frame((name), L(ans next), (long)sizeof(ans) - 1, (status), (close), (body))
/* Not complete when the bytes run out. */
#define UNFINISHED(name, s) expect_frame((name), L(s), 0, 0, 0, 0)

static void test_framer_content_length(void)
{
	FRAMED("200 with Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "", 200, 0,
	       RESP_BODY_LENGTH);
	FRAMED("404, then the next answer's bytes", "HTTP/1.1 404 Not Found\r\ncontent-length: 3\r\n\r\nno\n",
	       "HTTP/1.1 200 OK\r\n", 404, 0, RESP_BODY_LENGTH);
	FRAMED("301 with an empty body", "HTTP/1.1 301 Moved Permanently\r\nLocation: /x/\r\nContent-Length: 0\r\n\r\n",
	       "HTTP", 301, 0, RESP_BODY_LENGTH);
	FRAMED("bare LF line ends, no reason phrase", "HTTP/1.1 200\nContent-Length: 2\n\nok", "", 200, 0,
	       RESP_BODY_LENGTH);
	FRAMED("Connection: close", "HTTP/1.1 500 Oops\r\nConnection: Keep-Alive, Close\r\nContent-Length: 1\r\n\r\nx", "",
	       500, 1, RESP_BODY_LENGTH);
	FRAMED("HTTP/1.0 closes by default", "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", "", 200, 1,
	       RESP_BODY_LENGTH);
	FRAMED("HTTP/1.0 with keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", "",
	       200, 0, RESP_BODY_LENGTH);
	FRAMED("a repeated, equal Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
	       "H", 200, 0, RESP_BODY_LENGTH);
	UNFINISHED("a body not all here yet", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n12");
}

static void test_framer_chunked(void)
{
#define CHUNKED "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" \
		"5;name=value\r\nhello\r\nA \r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\n"
	FRAMED("chunked, with an extension and a trailer", CHUNKED, "", 200, 0, RESP_BODY_CHUNKED);
	FRAMED("chunked, then the next answer", CHUNKED, CHUNKED, 200, 0, RESP_BODY_CHUNKED);
#undef CHUNKED
	FRAMED("gzip, chunked is chunked", "HTTP/1.1 404 No\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n0\r\n\r\n", "X",
	       404, 0, RESP_BODY_CHUNKED);
	FRAMED("chunked beats Content-Length",
	       "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n", "", 200, 0,
	       RESP_BODY_CHUNKED);
	FRAMED("chunked with LF only", "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\nhi\n0\n\n", "", 200, 0,
	       RESP_BODY_CHUNKED);
	UNFINISHED("last chunk not here yet", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n");
}

static void test_framer_close_delimited(void)
{
	static const char body[] = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html>until the close";
	struct resp_framer f;
	long rc;

	UNFINISHED("no length: the body runs to the close", "HTTP/1.1 200 OK\r\n\r\n<html>");
	rc = frame(L(body), 0, &f);
	CHECK(rc == (long)sizeof(body) - 1 && f.body == RESP_BODY_CLOSE && f.close && f.status == 200,
	      "close-delimited: took %ld, body %d, close %d", rc, (int)f.body, f.close);
	CHECK(resp_framer_eof(&f) && resp_framer_done(&f), "close-delimited: complete at the close");
	rc = frame(L("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nabc"), 0, &f);
	CHECK(rc > 0 && f.body == RESP_BODY_CLOSE && resp_framer_eof(&f), "chunked not last: to the close");
	rc = frame(L("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n12"), 0, &f);
	CHECK(rc > 0 && !resp_framer_eof(&f), "a Content-Length body cut short is not complete at the close");
	rc = frame(L("HTTP/1.1 200 OK\r\nContent-Le"), 0, &f);
	CHECK(rc > 0 && !resp_framer_eof(&f), "a head cut short is not complete at the close");
	resp_framer_init(&f);
	CHECK(!resp_framer_eof(&f) && resp_framer_seen(&f) == 0, "nothing at all is not an answer");
}

static void test_framer_no_body(void)
{
	FRAMED("interim 1xx skipped, the final answer framed",
	       "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n"
	       "HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno", "", 404, 0, RESP_BODY_LENGTH);
	FRAMED("204 has no body", "HTTP/1.1 204 No Content\r\n\r\n", "HTTP/1.1", 204, 0, RESP_BODY_NONE);
	FRAMED("304 has no body whatever its length says", "HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n", "X",
	       304, 0, RESP_BODY_NONE);
	FRAMED("101 ends HTTP on the connection", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", "\x01\x02",
	       101, 1, RESP_BODY_NONE);
}

static void test_framer_malformed(void)
{
	static const char *const bad[] = {
		"\x01\xffnot http",
		"GET / HTTP/1.1\r\n\r\n",
		"HTTP/2 200\r\n\r\n",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 099 Low\r\n\r\n",
		"HTTP/1.1 200OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nNoColonHere\r\n\r\n",
		"HTTP/1.1 200 OK\r\n: empty-name\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx",
		"HTTP/1.1 200 OK\r\nContent-Length: 1234567890123456789\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1 x\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "malformed #%zu", i);
		expect_frame(name, bad[i], strlen(bad[i]), RESP_MALFORMED, 0, 0, 0);
	}
	{
		struct resp_framer f;
		struct gbuf g = gb_make(L("\x00\xffnot http"));

		resp_framer_init(&f);
		CHECK(resp_framer_feed(&f, g.p, 1) == RESP_MALFORMED, "garbage is refused at its first byte");
		gb_free(&g);
	}
}

static void test_framer_limits(void)
{
	size_t n = RESP_FRAMER_MAX_HEAD + 100;
	char *big = malloc(n);
	struct resp_framer f;
	long rc;

	memset(big, 'a', n);
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	rc = frame(big, n, 0, &f);
	CHECK(rc == RESP_MALFORMED, "a head over RESP_FRAMER_MAX_HEAD is malformed, got %ld", rc);
	/* A long header line (a cookie) the framer skips, then a length it reads. */
	memset(big, 'c', n);
	memcpy(big, "HTTP/1.1 200 OK\r\nSet-Cookie: ", 30);
	memcpy(big + 4000, L("\r\nContent-Length: 3\r\n\r\nabc"));
	rc = frame(big, 4026, 0, &f);
	CHECK(rc == 4026 && resp_framer_done(&f) && f.body == RESP_BODY_LENGTH, "a 4000-byte header line, got %ld", rc);
	CHECK(resp_framer_seen(&f) == 4026, "seen counts every byte, got %zu", resp_framer_seen(&f));
	/* A Content-Length value cut by the line cap is refused, not misread. */
	memset(big, '0', n);
	memcpy(big, "HTTP/1.1 200 OK\r\nContent-Length: ", 34);
	memcpy(big + 34 + RESP_LINE_CAP, "1\r\n\r\n", 5);
	rc = frame(big, 34 + RESP_LINE_CAP + 5, 0, &f);
	CHECK(rc == RESP_MALFORMED, "an over-long Content-Length line, got %ld", rc);
	/* A body far bigger than any buffer: only counted. */
	memcpy(big, "HTTP/1.1 200 OK\r\nContent-Length: 60000\r\n\r\n", 42);
	rc = frame(big, 42 + 60000, 0, &f);
	CHECK(rc == 42 + 60000 && resp_framer_done(&f), "a 60000-byte body, got %ld", rc);
	free(big);
}

int main(void)
{
	RUN(test_simple);
	RUN(test_every_prefix_partial);
	RUN(test_pipelined);
	RUN(test_malformed);
	RUN(test_head_limit);
	RUN(test_want_header_absent);
	RUN(test_framer_content_length);
	RUN(test_framer_chunked);
	RUN(test_framer_close_delimited);
	RUN(test_framer_no_body);
	RUN(test_framer_malformed);
	RUN(test_framer_limits);
	return check_summary();
}
