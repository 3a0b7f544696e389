/* test_response.c: unit tests for the probe's response parser
 * (probes/response.c). The probe's counts are only as good as this parser:
 * it must find each answer's worker id and where the answer ends, so that
 * pipelined and keep-alive answers are never merged or split. Inputs sit
 * against a guard page (check.h), so an over-read crashes. */
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

int main(void)
{
	RUN(test_simple);
	RUN(test_every_prefix_partial);
	RUN(test_pipelined);
	RUN(test_malformed);
	RUN(test_head_limit);
	RUN(test_want_header_absent);
	return check_summary();
}
