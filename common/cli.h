/* cli.h: the command-line pieces every acceptlab program shares (server,
 * probe, tracer, models): a usage error is one line on stderr naming the
 * bad argument, then exit 2. Header-only; define PROG (the program's name,
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

/* "PROG: <message> (see --help)" and exit 2. */
static inline void __attribute__((noreturn, format(printf, 1, 2))) bad_arg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see --help)\n");
	exit(2);
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
