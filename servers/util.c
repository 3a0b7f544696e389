/* util.c: clocks, one-write output lines, integer knobs and CPU lists. */
#include "server.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* s as a decimal integer in [lo, hi] into *v: 0, or -1 if it is not one. */
static int parse_in_range(const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return !*s || *end || errno || *v < lo || *v > hi ? -1 : 0;
}

long env_long(const char *name, long def, long lo, long hi)
{
	const char *s = getenv(name);
	long v;

	if (!s)
		return def;
	if (parse_in_range(s, lo, hi, &v) < 0) {
		fprintf(stderr, "acceptlab-server: %s=%s: expected an integer in %ld..%ld\n", name, s, lo, hi);
		exit(2);
	}
	return v;
}

int knob_parse_int(const char *name, const char *s, long lo, long hi, int *v, char *err, size_t errlen)
{
	long l;

	if (parse_in_range(s, lo, hi, &l) < 0) {
		snprintf(err, errlen, "%s %s: expected an integer in %ld..%ld", name, s, lo, hi);
		return -1;
	}
	*v = (int)l;
	return 0;
}

void emit_line(int fd, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	while (write(fd, buf, (size_t)n) < 0 && errno == EINTR)
		;
}

int parse_cpu_list(const char *s, int *cpus, int max, char *err, size_t errlen)
{
	int n = 0;
	const char *p = s;

	if (!*s) {
		snprintf(err, errlen, "empty CPU list");
		return -1;
	}
	while (*p) {
		char *end;
		long a, b;

		errno = 0;
		a = strtol(p, &end, 10);
		if (end == p || errno || a < 0 || a >= CPU_SETSIZE)
			goto bad;
		b = a;
		p = end;
		if (*p == '-') {
			p++;
			b = strtol(p, &end, 10);
			if (end == p || errno || b < a || b >= CPU_SETSIZE)
				goto bad;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			if (n == max) {
				snprintf(err, errlen, "more than %d CPUs in '%s'", max, s);
				return -1;
			}
			cpus[n++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	return n;
bad:
	snprintf(err, errlen, "'%s' is not a CPU list like 0,1 or 0-3", s);
	return -1;
}

void format_affinity(char *buf, size_t len)
{
	cpu_set_t set;
	size_t off = 0;
	int c = 0;

	buf[0] = '\0';
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return;
	while (c < CPU_SETSIZE) {
		int start;

		if (!CPU_ISSET(c, &set)) {
			c++;
			continue;
		}
		start = c;
		while (c + 1 < CPU_SETSIZE && CPU_ISSET(c + 1, &set))
			c++;
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, off ? ",%d" : "%d", start);
		if (c > start && off < len)
			off += (size_t)snprintf(buf + off, len - off, "-%d", c);
		c++;
	}
}
