/* app.c: the HTTP application (app.h): one handler per path. */
#include "app.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MAX_WORK_US 10000000ULL /* /work?us= cap: 10 s of CPU */
#define MAX_SLEEP_MS 60000ULL   /* /sleep?ms= cap */

/* Spins on the thread's CPU clock, so preemption does not shorten the work. */
static void spin_cpu_us(uint64_t us)
{
	struct timespec ts;
	int64_t start, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	start = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	do {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		t = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	} while (t - start < (int64_t)us * 1000);
}

static int path_is(const struct http_request *r, const char *p)
{
	size_t n = strlen(p);
	return r->path_len == n && memcmp(r->path, p, n) == 0;
}

/* "hello from acceptlab worker N\n" into body (room for it: APP_BODY_MAX),
 * without printf: GET / is the request the cost studies send. */
static int hello(const struct worker *w, char *body)
{
	static const char lead[] = "hello from acceptlab worker ";
	char digits[12];
	int nd = 0, n = (int)sizeof(lead) - 1;
	unsigned v = (unsigned)w->index;

	memcpy(body, lead, sizeof(lead) - 1);
	do
		digits[nd++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (nd)
		body[n++] = digits[--nd];
	body[n++] = '\n';
	return n;
}

int app_route(struct worker *w, const struct http_request *r, char *body, size_t len, size_t *body_len,
	      int *waited)
{
	int n, status = 200;
	uint64_t v;

	*waited = 0;

	if (!(r->method_len == 3 && memcmp(r->method, "GET", 3) == 0)) {
		n = snprintf(body, len, "only GET is served\n");
		status = 405;
	} else if (path_is(r, "/pid")) {
		/* Threads mode answers the thread's id: the worker, not the process. */
		n = snprintf(body, len, "%d\n", (int)(w->srv->cfg.threads ? w->tid : w->pid));
	} else if (path_is(r, "/variant")) {
		const struct accept_variant *va = w->srv->cfg.variant;
		n = va->describe ? va->describe(w, body, len) : snprintf(body, len, "{\"variant\":\"%s\"}\n", va->name);
	} else if (path_is(r, "/")) {
		n = hello(w, body);
	} else if (path_is(r, "/work")) {
		if (http_query_u64(r->query, r->query_len, "us", MAX_WORK_US, &v) < 0) {
			n = snprintf(body, len, "/work needs us=N with N <= %llu\n", MAX_WORK_US);
			status = 400;
		} else {
			spin_cpu_us(v);
			*waited = 1;
			n = snprintf(body, len, "worked %llu us\n", (unsigned long long)v);
		}
	} else if (path_is(r, "/sleep")) {
		if (http_query_u64(r->query, r->query_len, "ms", MAX_SLEEP_MS, &v) < 0) {
			n = snprintf(body, len, "/sleep needs ms=N with N <= %llu\n", MAX_SLEEP_MS);
			status = 400;
		} else {
			struct timespec ts = { (time_t)(v / 1000), (long)(v % 1000) * 1000000 };
			while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
			*waited = 1;
			n = snprintf(body, len, "slept %llu ms\n", (unsigned long long)v);
		}
	} else {
		n = snprintf(body, len, "not found\n");
		status = 404;
	}
	*body_len = (size_t)n;
	return status;
}
