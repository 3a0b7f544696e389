/* advice.c: the advice file, found, read, checked and picked from (see
 * advice.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advice.h"

static const char *const KINDS[] = { "measured", "alternative", "cost", "setting" };

static int refuse(struct advice *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int refuse(struct advice *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->why, sizeof(a->why), fmt, ap);
	va_end(ap);
	a->found = 0;
	a->nlines = 0;
	return -1;
}

/* Valid UTF-8 with no control character (C0, DEL): 1, else 0. */
static int clean_utf8(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i];
		unsigned cp, need, min;

		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f)
				return 0;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			need = 1, cp = c & 0x1f, min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2, cp = c & 0x0f, min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3, cp = c & 0x07, min = 0x10000;
		} else {
			return 0;
		}
		if (len - i <= need)
			return 0;
		for (unsigned j = 1; j <= need; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += need + 1;
	}
	return 1;
}

static int variant_name(const char *s)
{
	if (!*s || strlen(s) > 64)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return 0;
	return 1;
}

static const char *kind_of(const char *s)
{
	for (size_t i = 0; i < sizeof(KINDS) / sizeof(KINDS[0]); i++)
		if (!strcmp(s, KINDS[i]))
			return KINDS[i];
	return NULL;
}

/* A worker count: decimal digits, 1..1000000. */
static int count_of(const char *s)
{
	long v = 0;

	if (!*s || strlen(s) > 7)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		v = v * 10 + (*s - '0');
	}
	return v >= 1 && v <= 1000000 ? (int)v : 0;
}

/* "# run STAMP": the stamp into a->run, 1; else 0. */
static int run_line(struct advice *a, const char *line)
{
	const char *s;
	size_t n;

	if (strncmp(line, "# run ", 6))
		return 0;
	s = line + 6;
	n = strcspn(s, " \t");
	if (!n || n >= sizeof(a->run) || s[n + strspn(s + n, " \t")])
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return 0;
	memcpy(a->run, s, n);
	a->run[n] = '\0';
	return 1;
}

int advice_parse(struct advice *a, char *text, size_t len, const char *name, const char *variant, int workers)
{
	struct row { const char *kind, *text; int workers; } *rows = NULL;
	int nrows = 0, cap = 0, best = 0, lineno = 0, seen_variant = 0;
	char *p = text, *end = text + len;

	a->found = 0;
	a->nlines = a->more = 0;
	a->run[0] = '\0';
	a->asked = workers;
	a->workers = 0;
	if (memchr(text, '\0', len))
		return refuse(a, "%s: malformed: a NUL byte", name);
	if (!len)
		return refuse(a, "%s: malformed: empty (its first line must be \"# run STAMP\")", name);
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *f[4], *tab;
		char *line = p;
		size_t llen;
		int nf = 0;

		if (!nl)
			nl = end;
		*nl = '\0';
		p = nl + 1;
		lineno++;
		llen = (size_t)(nl - line);
		if (llen && line[llen - 1] == '\r')
			line[--llen] = '\0';
		if (lineno == 1) {
			if (!run_line(a, line)) {
				free(rows);
				return refuse(a, "%s: malformed: line 1 is not \"# run STAMP\"", name);
			}
			continue;
		}
		if (!llen || line[0] == '#')
			continue;
		for (char *s = line; nf < 4; s = tab + 1) {
			f[nf++] = s;
			if (!(tab = strchr(s, '\t')))
				break;
			*tab = '\0';
			if (nf == 4) {
				free(rows);
				return refuse(a, "%s: malformed: line %d has more than 4 tab-separated fields (a tab in the "
						 "text?)", name, lineno);
			}
		}
		if (nf != 4) {
			free(rows);
			return refuse(a, "%s: malformed: line %d has %d tab-separated field%s, not 4 (variant, workers, "
					 "kind, text)", name, lineno, nf, nf == 1 ? "" : "s");
		}
		if (!variant_name(f[0])) {
			free(rows);
			return refuse(a, "%s: malformed: line %d: the variant is not a variant's name", name, lineno);
		}
		if (!count_of(f[1])) {
			free(rows);
			return refuse(a, "%s: malformed: line %d: the worker count is not a positive integer", name, lineno);
		}
		if (!kind_of(f[2])) {
			free(rows);
			return refuse(a, "%s: malformed: line %d: the kind is not measured, alternative, cost or setting",
				      name, lineno);
		}
		if (!*f[3] || !clean_utf8((const unsigned char *)f[3], strlen(f[3]))) {
			free(rows);
			return refuse(a, "%s: malformed: line %d: the text is empty, not UTF-8, or has a control "
					 "character", name, lineno);
		}
		if (!variant || strcmp(f[0], variant))
			continue;
		seen_variant = 1;
		if (nrows == cap) {
			void *more;

			cap = cap ? cap * 2 : 32;
			if (!(more = realloc(rows, (size_t)cap * sizeof(*rows)))) {
				free(rows);
				return refuse(a, "%s: %s", name, strerror(ENOMEM));
			}
			rows = more;
		}
		rows[nrows++] = (struct row){ kind_of(f[2]), f[3], count_of(f[1]) };
	}
	if (!variant) {
		free(rows);
		return refuse(a, "no closest variant, so no measured rows apply");
	}
	if (workers < 1) {
		free(rows);
		return refuse(a, "no worker seen, so no worker count to look the rows up by");
	}
	if (!seen_variant)
		return refuse(a, "%s (run %s) has no rows for %s", name, a->run, variant);
	/* The count: the diagnosed one, else the nearest (the larger of two as near). */
	for (int i = 0; i < nrows; i++) {
		long d = labs((long)rows[i].workers - workers), bd = labs((long)best - workers);

		if (!best || d < bd || (d == bd && rows[i].workers > best))
			best = rows[i].workers;
	}
	a->workers = best;
	for (int i = 0; i < nrows; i++) {
		if (rows[i].workers != best)
			continue;
		if (a->nlines == ADVICE_MAX_LINES) {
			a->more++;
			continue;
		}
		a->lines[a->nlines++] = (struct advice_line){ rows[i].kind, rows[i].text };
	}
	free(rows);
	a->found = 1;
	a->why[0] = '\0';
	return 0;
}

int advice_locate(struct advice *a, const char *exe_dir, char *out, size_t len)
{
	const char *env = getenv(ADVICE_ENV);
	char prefix[4000], share[4096], report[4096];
	char *slash;

	if (env && *env) {
		snprintf(out, len, "%s", env);
		return 0;
	}
	snprintf(prefix, sizeof(prefix), "%s", exe_dir);
	slash = strrchr(prefix, '/');
	if (slash && slash != prefix)
		*slash = '\0';
	else
		snprintf(prefix, sizeof(prefix), "%s/..", exe_dir);
	snprintf(share, sizeof(share), "%s/share/acceptlab/advice.tsv", prefix);
	snprintf(report, sizeof(report), "%s/report/advice.tsv", prefix);
	if (access(share, F_OK) == 0) {
		snprintf(out, len, "%s", share);
		return 0;
	}
	if (access(report, F_OK) == 0) {
		snprintf(out, len, "%s", report);
		return 0;
	}
	return refuse(a, "no advice file: neither %s (installed) nor %s (a clone) exists, and " ADVICE_ENV
			 " is not set", share, report);
}

void advice_find(struct advice *a, const char *exe_dir, const char *variant, int workers)
{
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd;

	memset(a, 0, sizeof(*a));
	a->asked = workers;
	if (advice_locate(a, exe_dir, a->path, sizeof(a->path)) < 0)
		return;
	if ((fd = open(a->path, O_RDONLY | O_CLOEXEC)) < 0) {
		refuse(a, "%s: %s", a->path, strerror(errno));
		return;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		refuse(a, "%s: not a regular file", a->path);
		close(fd);
		return;
	}
	if (st.st_size > ADVICE_MAX_BYTES) {
		refuse(a, "%s: malformed: larger than %d bytes", a->path, ADVICE_MAX_BYTES);
		close(fd);
		return;
	}
	if (!(a->buf = malloc((size_t)st.st_size + 1))) {
		refuse(a, "%s: %s", a->path, strerror(ENOMEM));
		close(fd);
		return;
	}
	while (got < (size_t)st.st_size && (n = read(fd, a->buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	a->buf[got] = '\0';
	advice_parse(a, a->buf, got, a->path, variant, workers);
}

void advice_count_text(const struct advice *a, char *out, size_t len)
{
	if (a->workers == a->asked)
		snprintf(out, len, "measured at %d worker%s, as diagnosed", a->workers, a->workers == 1 ? "" : "s");
	else
		snprintf(out, len, "measured at %d worker%s, the nearest to your %d", a->workers,
			 a->workers == 1 ? "" : "s", a->asked);
}

void advice_free(struct advice *a)
{
	free(a->buf);
	a->buf = NULL;
	a->found = 0;
	a->nlines = 0;
}
