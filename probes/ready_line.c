/* ready_line.c: the ready line's reader (see ready_line.h). The line is
 * JSON with a fixed key order ({"index":I,"pid":P,"tid":T,...} per
 * worker); whitespace outside strings is dropped first, so a line written
 * with spaces (json.dumps) reads the same. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ready_line.h"

/* Drops whitespace outside JSON strings, so '{"a": 1}' reads as '{"a":1}'. */
static void squeeze_json(char *s)
{
	char *out = s;
	int in_string = 0;

	for (; *s; s++) {
		if (*s == '"' && (out == s || s[-1] != '\\'))
			in_string = !in_string;
		if (!in_string && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
			continue;
		*out++ = *s;
	}
	*out = '\0';
}

int ready_line_read(const char *path, struct ready_worker *w, int max, int *threads, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[READY_MAX_LINE] = "";
	const char *p;
	int n = 0;

	if (!f) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	if (fgets(line, sizeof(line), f))
		squeeze_json(line);
	fclose(f);
	if (!strstr(line, "\"event\":\"ready\"") || !(p = strstr(line, "\"workers\":["))) {
		snprintf(err, errlen, "first line is not the server's ready line");
		return -1;
	}
	*threads = strstr(line, "\"mode\":\"threads\"") != NULL;
	while ((p = strstr(p, "{\"index\":")) != NULL) {
		struct ready_worker rw;

		if (sscanf(p, "{\"index\":%d,\"pid\":%d,\"tid\":%d", &rw.index, &rw.pid, &rw.tid) != 3) {
			snprintf(err, errlen, "cannot read a worker entry");
			return -1;
		}
		if (n < max)
			w[n] = rw;
		n++;
		p++;
	}
	return n;
}
