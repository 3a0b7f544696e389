/* cli.h: the command-line pieces every acceptlab program shares (server,
 * probe, tracer, models): an error is one line on stderr starting with the
 * program's name; a usage error names the bad argument and exits 2. Header-only; define PROG (the program's name,
 * a string literal) before including it. */
#ifndef ACCEPTLAB_CLI_H
#define ACCEPTLAB_CLI_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef PROG
#error "define PROG, the program's name, before including common/cli.h"
#endif

/* "PROG: <message><tail>" on one line, then exit with status. */
static inline void __attribute__((noreturn)) vdie(int status, const char *tail, const char *fmt, va_list ap)
{
	fprintf(stderr, PROG ": ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "%s\n", tail);
	exit(status);
}

/* "PROG: <message>" and exit with status (1 a runtime failure, 2 a usage
 * error that needs no pointer to --help). */
static inline void __attribute__((noreturn, format(printf, 2, 3))) die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(status, "", fmt, ap);
}

/* "PROG: <message> (see --help)" and exit 2. */
static inline void __attribute__((noreturn, format(printf, 1, 2))) bad_arg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(2, " (see --help)", fmt, ap);
}

/* The value of option name (as the user wrote it, e.g. "--port") given as
 * s: a decimal integer in [lo, hi], or a usage error naming both. */
static inline long parse_long(const char *name, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi)
		bad_arg("%s %s: expected an integer in %ld..%ld", name, s, lo, hi);
	return v;
}

#endif
