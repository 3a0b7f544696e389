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

/* ---- resp_framer: where any HTTP/1.x response ends ------------------- */

enum { F_STATUS, F_HEADER, F_LENGTH, F_CHUNK_SIZE, F_CHUNK_DATA, F_CHUNK_END, F_TRAILER, F_CLOSE, F_DONE };

void resp_framer_init(struct resp_framer *f)
{
	memset(f, 0, sizeof(*f));
	f->state = F_STATUS;
}

int resp_framer_done(const struct resp_framer *f)
{
	return f->state == F_DONE;
}

size_t resp_framer_seen(const struct resp_framer *f)
{
	return (size_t)f->seen;
}

int resp_framer_eof(struct resp_framer *f)
{
	if (f->state == F_CLOSE)
		f->state = F_DONE;
	return f->state == F_DONE;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* 1 if the comma-separated list v[0..n) has the token tok (case-insensitive). */
static int has_token(const char *v, size_t n, const char *tok)
{
	size_t tl = strlen(tok), i = 0;

	while (i < n) {
		size_t a = i, b;

		while (i < n && v[i] != ',')
			i++;
		b = i++;
		while (a < b && is_space(v[a]))
			a++;
		while (b > a && is_space(v[b - 1]))
			b--;
		if (b - a == tl && strncasecmp(v + a, tok, tl) == 0)
			return 1;
	}
	return 0;
}

/* 1 if the last coding of a Transfer-Encoding value is chunked. */
static int last_is_chunked(const char *v, size_t n)
{
	size_t a;

	while (n > 0 && is_space(v[n - 1]))
		n--;
	a = n;
	while (a > 0 && v[a - 1] != ',')
		a--;
	while (a < n && is_space(v[a]))
		a++;
	return n - a == 7 && strncasecmp(v + a, "chunked", 7) == 0;
}

static int status_line(struct resp_framer *f, const char *l, size_t n)
{
	if (n < 12 || memcmp(l, "HTTP/1.", 7) != 0 || l[7] < '0' || l[7] > '9' || l[8] != ' ')
		return -1;
	for (int k = 9; k < 12; k++)
		if (l[k] < '0' || l[k] > '9')
			return -1;
	if (n > 12 && l[12] != ' ')
		return -1;
	f->status = (l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0');
	if (f->status < 100)
		return -1;
	f->http10 = l[7] == '0';
	f->have_length = f->chunked = f->te = f->conn_close = f->keep_alive = 0;
	f->length = 0;
	return 0;
}

/* The head's empty line: decides how the body ends (or, for an interim
 * 1xx, waits for the next head). */
static void end_of_head(struct resp_framer *f)
{
	if (f->status < 200 && f->status != 101) {
		f->state = F_STATUS; /* interim: the final response follows */
		return;
	}
	f->close = f->conn_close || (f->http10 && !f->keep_alive);
	if (f->status == 101) {
		/* Switching protocols: what follows is not HTTP. */
		f->body = RESP_BODY_NONE;
		f->close = 1;
		f->state = F_DONE;
	} else if (f->status == 204 || f->status == 304) {
		f->body = RESP_BODY_NONE;
		f->state = F_DONE;
	} else if (f->te && f->chunked) {
		f->body = RESP_BODY_CHUNKED;
		f->state = F_CHUNK_SIZE;
	} else if (f->te || !f->have_length) {
		/* No length, or a coding we cannot frame: the body ends at the close. */
		f->body = RESP_BODY_CLOSE;
		f->close = 1;
		f->state = F_CLOSE;
	} else {
		f->body = RESP_BODY_LENGTH;
		f->left = f->length;
		f->state = f->length ? F_LENGTH : F_DONE;
	}
}

static int header_line(struct resp_framer *f, const char *l, size_t n, int cut)
{
	const char *colon;
	size_t name_len, v0, v1;

	if (n == 0) {
		end_of_head(f);
		return 0;
	}
	if (is_space(l[0]))
		return 0; /* obs-fold: a continuation of a header we do not need */
	colon = memchr(l, ':', n);
	if (!colon || colon == l)
		return -1;
	name_len = (size_t)(colon - l);
	v0 = name_len + 1;
	while (v0 < n && is_space(l[v0]))
		v0++;
	v1 = n;
	while (v1 > v0 && is_space(l[v1 - 1]))
		v1--;
	if (name_len == 14 && strncasecmp(l, "content-length", 14) == 0) {
		unsigned long long v = 0;

		if (cut || v1 == v0 || v1 - v0 > 18)
			return -1;
		for (size_t i = v0; i < v1; i++) {
			if (l[i] < '0' || l[i] > '9')
				return -1;
			v = v * 10 + (unsigned long long)(l[i] - '0');
		}
		if (f->have_length && v != f->length)
			return -1;
		f->have_length = 1;
		f->length = v;
	} else if (name_len == 17 && strncasecmp(l, "transfer-encoding", 17) == 0) {
		if (cut)
			return -1;
		f->te = 1;
		f->chunked = last_is_chunked(l + v0, v1 - v0);
	} else if (name_len == 10 && strncasecmp(l, "connection", 10) == 0) {
		if (has_token(l + v0, v1 - v0, "close"))
			f->conn_close = 1;
		if (has_token(l + v0, v1 - v0, "keep-alive"))
			f->keep_alive = 1;
	}
	return 0;
}

static int chunk_size_line(struct resp_framer *f, const char *l, size_t n)
{
	unsigned long long v = 0;
	size_t i = 0;

	for (; i < n; i++) {
		int d = l[i] >= '0' && l[i] <= '9' ? l[i] - '0' : l[i] >= 'a' && l[i] <= 'f' ? l[i] - 'a' + 10 :
			l[i] >= 'A' && l[i] <= 'F' ? l[i] - 'A' + 10 : -1;
		if (d < 0)
			break;
		if (i == 15)
			return -1; /* over 2^60 bytes: not a chunk we will read */
		v = v * 16 + (unsigned long long)d;
	}
	if (i == 0)
		return -1;
	while (i < n && is_space(l[i]))
		i++;
	if (i < n && l[i] != ';')
		return -1;
	f->left = v;
	f->state = v ? F_CHUNK_DATA : F_TRAILER;
	return 0;
}

/* One complete line (its '\n' seen) in the state it ends. */
static int framer_line(struct resp_framer *f)
{
	int cut = f->line_len > RESP_LINE_CAP;
	size_t n = cut ? RESP_LINE_CAP : f->line_len;
	const char *l = f->line;

	if (!cut && n > 0 && l[n - 1] == '\r')
		n--;
	f->line_len = 0;
	switch (f->state) {
	case F_STATUS:
		if (status_line(f, l, n) < 0)
			return -1;
		f->state = F_HEADER;
		return 0;
	case F_HEADER:
		return header_line(f, l, n, cut);
	case F_CHUNK_SIZE:
		return chunk_size_line(f, l, n);
	case F_CHUNK_END:
		if (n != 0 || cut)
			return -1;
		f->state = F_CHUNK_SIZE;
		return 0;
	case F_TRAILER:
		if (n == 0 && !cut)
			f->state = F_DONE;
		return 0;
	}
	return -1;
}

long resp_framer_feed(struct resp_framer *f, const char *buf, size_t len)
{
	static const char prefix[] = "HTTP/1.";
	size_t i = 0;

	while (i < len && f->state != F_DONE) {
		if (f->state == F_LENGTH || f->state == F_CHUNK_DATA) {
			size_t take = len - i;

			if ((unsigned long long)take > f->left)
				take = (size_t)f->left;
			f->left -= take;
			i += take;
			if (f->left == 0)
				f->state = f->state == F_LENGTH ? F_DONE : F_CHUNK_END;
			continue;
		}
		if (f->state == F_CLOSE) {
			i = len;
			continue;
		}
		/* A line: the head's, a chunk size, a chunk's end or a trailer. */
		char c = buf[i++];

		if (f->state == F_STATUS && f->line_len < sizeof(prefix) - 1 && c != prefix[f->line_len])
			return RESP_MALFORMED; /* not the start of an HTTP/1.x response: say so now */
		if (f->state == F_STATUS || f->state == F_HEADER || f->state == F_TRAILER)
			if (++f->head_len > RESP_FRAMER_MAX_HEAD)
				return RESP_MALFORMED;
		if (c == '\n') {
			if (framer_line(f) < 0)
				return RESP_MALFORMED;
			continue;
		}
		if (f->line_len < RESP_LINE_CAP)
			f->line[f->line_len] = c;
		if (++f->line_len > RESP_FRAMER_MAX_HEAD)
			return RESP_MALFORMED;
	}
	f->seen += i;
	return (long)i;
}
