/* app.h: the HTTP application every worker serves, the same for every
 * variant: GET /pid, /, /work?us=N (CPU), /sleep?ms=N (a slow view) and
 * /variant. The connection around it (buffers, keep-alive, the handler
 * clock) is conn.c's. */
#ifndef ACCEPTLAB_APP_H
#define ACCEPTLAB_APP_H

#include "server.h"
#include "http.h"

#include <stddef.h>

/* The room app_route's body needs (GET /variant's is the longest). */
#define APP_BODY_MAX 8192

/* Answers request r for worker w: writes the body into body (len bytes at
 * most; APP_BODY_MAX is enough), its length into *body_len, and returns the
 * status. /work and /sleep run inline: they return when done, with *waited
 * set (the worker reads its clock again after them; 0 for the others). */
int app_route(struct worker *w, const struct http_request *r, char *body, size_t len, size_t *body_len,
	      int *waited);

#endif
