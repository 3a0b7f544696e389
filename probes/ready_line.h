/* ready_line.h: reads a server's ready line (acceptlab-server's first line
 * on stdout, saved to a file for --workers-from): the workers it lists, by
 * index, pid and tid. Reports errors in a buffer; never prints or exits. */
#ifndef ACCEPTLAB_READY_LINE_H
#define ACCEPTLAB_READY_LINE_H

#include <stddef.h>

#define READY_MAX_LINE 16384    /* longer lines are read up to this */
#define READY_MAX_WORKERS 1024  /* more entries than a READY_MAX_LINE line can hold */
#define READY_ERR_LEN 256

struct ready_worker {
	int index, pid, tid;
};

/* Reads the first line of path and stores the workers it lists, in order,
 * in w[0..max); sets *threads when its mode is "threads". Returns how many
 * it lists, or -1 with err saying why (path unreadable, the line is not a
 * ready line, or an entry cannot be read). */
int ready_line_read(const char *path, struct ready_worker *w, int max, int *threads, char *err, size_t errlen);

#endif
