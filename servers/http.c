/* http.c: the request-head parser declared in http.h. */
#include "http.h"

#include <string.h>

/* RFC 9110 tchar: the characters of a method or a header name. A table,
 * not a search of the punctuation per character: every byte of every
 * header name passes through here. */
#define T1(c) [c] = 1
static const unsigned char tchar[256] = {
	T1('!'), T1('#'), T1('$'), T1('%'), T1('&'), T1('\''), T1('*'), T1('+'), T1('-'), T1('.'),
	T1('^'), T1('_'), T1('`'), T1('|'), T1('~'),
	T1('0'), T1('1'), T1('2'), T1('3'), T1('4'), T1('5'), T1('6'), T1('7'), T1('8'), T1('9'),
	T1('A'), T1('B'), T1('C'), T1('D'), T1('E'), T1('F'), T1('G'), T1('H'), T1('I'), T1('J'),
	T1('K'), T1('L'), T1('M'), T1('N'), T1('O'), T1('P'), T1('Q'), T1('R'), T1('S'), T1('T'),
	T1('U'), T1('V'), T1('W'), T1('X'), T1('Y'), T1('Z'),
	T1('a'), T1('b'), T1('c'), T1('d'), T1('e'), T1('f'), T1('g'), T1('h'), T1('i'), T1('j'),
	T1('k'), T1('l'), T1('m'), T1('n'), T1('o'), T1('p'), T1('q'), T1('r'), T1('s'), T1('t'),
	T1('u'), T1('v'), T1('w'), T1('x'), T1('y'), T1('z'),
};
#undef T1

static int is_tchar(unsigned char c)
{
	return tchar[c];
}

/* A header value may hold visible characters, SP, HTAB and obs-text. */
static int is_value_char(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* A request target: visible ASCII, no spaces or controls. */
static int is_target_char(unsigned char c)
{
	return c > 0x20 && c < 0x7f;
}

static int lower_eq(const char *s, size_t n, const char *lit)
{
	size_t i;

	if (strlen(lit) != n)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != lit[i])
			return 0;
	}
	return 1;
}

/* Does the comma-separated list s[0..n) contain token tok (case-insensitive)? */
static int list_has(const char *s, size_t n, const char *tok)
{
	size_t i = 0;

	while (i < n) {
		size_t start, end;
		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ','))
			i++;
		start = i;
		while (i < n && s[i] != ',')
			i++;
		end = i;
		while (end > start && (s[end - 1] == ' ' || s[end - 1] == '\t'))
			end--;
		if (end > start && lower_eq(s + start, end - start, tok))
			return 1;
	}
	return 0;
}

/* Finds the end of the line starting at p: returns the index of '\n' in
 * buf, or -1 if none before len. */
static long line_end(const char *buf, size_t p, size_t len)
{
	const char *nl = memchr(buf + p, '\n', len - p);
	return nl ? (long)(nl - buf) : -1;
}

static int parse_decimal(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0 || n > 20)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		uint64_t d = (uint64_t)(s[i] - '0');
		if (d > max || v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static int parse_request_line(const char *s, size_t n, struct http_request *req)
{
	size_t i = 0, t0, t1;

	while (i < n && is_tchar((unsigned char)s[i]))
		i++;
	if (i == 0 || i >= n || s[i] != ' ')
		return HTTP_MALFORMED;
	req->method = s;
	req->method_len = i;
	t0 = ++i;
	while (i < n && is_target_char((unsigned char)s[i]))
		i++;
	t1 = i;
	if (t1 == t0 || i >= n || s[i] != ' ')
		return HTTP_MALFORMED;
	i++;
	if (n - i != 8 || memcmp(s + i, "HTTP/1.", 7) != 0 ||
	    (s[i + 7] != '0' && s[i + 7] != '1'))
		return HTTP_MALFORMED;
	req->minor_version = s[i + 7] - '0';

	req->path = s + t0;
	req->path_len = t1 - t0;
	req->query = NULL;
	req->query_len = 0;
	{
		const char *q = memchr(s + t0, '?', t1 - t0);
		if (q) {
			req->path_len = (size_t)(q - (s + t0));
			req->query = q + 1;
			req->query_len = (size_t)((s + t1) - (q + 1));
		}
	}
	return 0;
}

int http_parse_request(const char *buf, size_t len, struct http_request *req)
{
	size_t p = 0, limit = len < HTTP_MAX_HEAD ? len : HTTP_MAX_HEAD;
	int have_close = 0, have_keep_alive = 0, have_length = 0;
	long e;

	memset(req, 0, sizeof(*req));

	/* Tolerate the empty lines (CRLF or LF) RFC 9112 lets a server skip
	 * before a request. */
	while (p < limit && (buf[p] == '\n' || (buf[p] == '\r' && p + 1 < limit && buf[p + 1] == '\n')))
		p++;

	e = line_end(buf, p, limit);
	if (e < 0)
		return len >= HTTP_MAX_HEAD ? HTTP_TOO_LARGE : HTTP_PARTIAL;
	{
		size_t n = (size_t)e - p;
		if (n > 0 && buf[p + n - 1] == '\r')
			n--;
		if (parse_request_line(buf + p, n, req) < 0)
			return HTTP_MALFORMED;
	}
	p = (size_t)e + 1;

	for (;;) {
		size_t n, colon, v0, v1;

		e = line_end(buf, p, limit);
		if (e < 0)
			return len >= HTTP_MAX_HEAD ? HTTP_TOO_LARGE : HTTP_PARTIAL;
		n = (size_t)e - p;
		if (n > 0 && buf[p + n - 1] == '\r')
			n--;
		if (n == 0)
			break; /* the empty line that ends the head */

		colon = 0;
		while (colon < n && is_tchar((unsigned char)buf[p + colon]))
			colon++;
		if (colon == 0 || colon >= n || buf[p + colon] != ':')
			return HTTP_MALFORMED; /* also refuses obs-fold continuation lines */
		v0 = colon + 1;
		while (v0 < n && (buf[p + v0] == ' ' || buf[p + v0] == '\t'))
			v0++;
		v1 = n;
		while (v1 > v0 && (buf[p + v1 - 1] == ' ' || buf[p + v1 - 1] == '\t'))
			v1--;
		for (size_t k = v0; k < v1; k++)
			if (!is_value_char((unsigned char)buf[p + k]))
				return HTTP_MALFORMED;

		{
			const char *name = buf + p, *val = buf + p + v0;
			size_t vlen = v1 - v0;

			if (lower_eq(name, colon, "connection")) {
				have_close |= list_has(val, vlen, "close");
				have_keep_alive |= list_has(val, vlen, "keep-alive");
			} else if (lower_eq(name, colon, "content-length")) {
				uint64_t cl;
				if (parse_decimal(val, vlen, UINT64_MAX, &cl) < 0)
					return HTTP_MALFORMED;
				if (have_length && cl != req->content_length)
					return HTTP_MALFORMED; /* conflicting lengths: smuggling shape */
				req->content_length = cl;
				have_length = 1;
			} else if (lower_eq(name, colon, "transfer-encoding")) {
				return HTTP_MALFORMED; /* no chunked bodies here */
			}
		}
		p = (size_t)e + 1;
	}

	if (req->minor_version == 0)
		req->keep_alive = have_keep_alive && !have_close;
	else
		req->keep_alive = !have_close;
	return (int)((size_t)e + 1);
}

int http_query_u64(const char *query, size_t query_len, const char *key,
		   uint64_t max, uint64_t *out)
{
	size_t klen = strlen(key), i = 0;

	if (!query)
		return -1;
	while (i < query_len) {
		size_t start = i, eq, end;
		while (i < query_len && query[i] != '&')
			i++;
		end = i;
		i++; /* skip '&' */
		eq = start;
		while (eq < end && query[eq] != '=')
			eq++;
		if (eq - start == klen && memcmp(query + start, key, klen) == 0 && eq < end)
			return parse_decimal(query + eq + 1, end - eq - 1, max, out);
	}
	return -1;
}

const char *http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 413: return "Content Too Large";
	case 431: return "Request Header Fields Too Large";
	case 503: return "Service Unavailable";
	default: return "Unknown";
	}
}
