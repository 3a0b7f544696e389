/* response.c: the parser declared in response.h. */
#include "response.h"

#include <string.h>
#include <strings.h>

static int parse_len(const char *s, size_t n, size_t *out)
{
	size_t v = 0;

	if (n == 0 || n > 9)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (size_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

int resp_parse(const char *buf, size_t len, const char *want_header, struct http_response *r)
{
	size_t p = 0, want_len = want_header ? strlen(want_header) : 0;
	size_t limit = len < RESP_MAX_HEAD ? len : RESP_MAX_HEAD;
	size_t content_length = 0;
	int have_length = 0, first = 1;

	memset(r, 0, sizeof(*r));
	for (;;) {
		const char *nl = memchr(buf + p, '\n', limit - p);
		size_t n;

		if (!nl)
			return len >= RESP_MAX_HEAD ? RESP_MALFORMED : RESP_PARTIAL;
		n = (size_t)(nl - (buf + p));
		if (n > 0 && buf[p + n - 1] == '\r')
			n--;
		if (first) {
			/* "HTTP/1.x SSS reason" */
			if (n < 12 || memcmp(buf + p, "HTTP/1.", 7) != 0 || buf[p + 8] != ' ')
				return RESP_MALFORMED;
			for (int k = 9; k < 12; k++)
				if (buf[p + k] < '0' || buf[p + k] > '9')
					return RESP_MALFORMED;
			r->status = (buf[p + 9] - '0') * 100 + (buf[p + 10] - '0') * 10 + (buf[p + 11] - '0');
			first = 0;
		} else if (n == 0) {
			p = (size_t)(nl - buf) + 1;
			break;
		} else {
			const char *line = buf + p, *colon = memchr(line, ':', n);
			size_t name_len, v0, v1;

			if (!colon || colon == line)
				return RESP_MALFORMED;
			name_len = (size_t)(colon - line);
			v0 = name_len + 1;
			while (v0 < n && (line[v0] == ' ' || line[v0] == '\t'))
				v0++;
			v1 = n;
			while (v1 > v0 && (line[v1 - 1] == ' ' || line[v1 - 1] == '\t'))
				v1--;
			if (name_len == 14 && strncasecmp(line, "content-length", 14) == 0) {
				if (parse_len(line + v0, v1 - v0, &content_length) < 0 ||
				    content_length > RESP_MAX_BODY)
					return RESP_MALFORMED;
				have_length = 1;
			} else if (name_len == 10 && strncasecmp(line, "connection", 10) == 0) {
				r->close = v1 - v0 == 5 && strncasecmp(line + v0, "close", 5) == 0;
			}
			if (want_len && name_len == want_len && strncasecmp(line, want_header, want_len) == 0) {
				r->header = line + v0;
				r->header_len = v1 - v0;
			}
		}
		p = (size_t)(nl - buf) + 1;
	}
	if (!have_length)
		return RESP_MALFORMED;
	if (len - p < content_length)
		return RESP_PARTIAL;
	r->body = buf + p;
	r->body_len = content_length;
	return (int)(p + content_length);
}
