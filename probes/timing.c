/* timing.c: the probe's clock, percentiles and per-connection latency output (timing.h). */
#include "timing.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

long long percentile(int64_t *v, int n, double p)
{
	int rank;

	if (n == 0)
		return -1;
	qsort(v, (size_t)n, sizeof(*v), cmp_i64);
	rank = (int)ceil(p / 100.0 * n);
	return (long long)v[rank < 1 ? 0 : rank - 1];
}

void json_latencies(FILE *f, int64_t t0, const struct conn_time *ct, int n)
{
	int64_t last = 0;

	for (int i = 0; i < n; i++)
		if (ct[i].t_done > last)
			last = ct[i].t_done;
	if (last)
		fprintf(f, "\"completion_us\":%lld,", (long long)((last - t0) / 1000));
	else
		fprintf(f, "\"completion_us\":null,");
	fprintf(f, "\"latency_us\":[");
	for (int i = 0; i < n; i++) {
		if (ct[i].t_done)
			fprintf(f, "%s%lld", i ? "," : "", (long long)((ct[i].t_done - ct[i].t_start) / 1000));
		else
			fprintf(f, "%snull", i ? "," : "");
	}
	fprintf(f, "],");
	if (n > 0 && !ct[0].owner)
		return; /* no worker attributed: no served_by */
	fprintf(f, "\"served_by\":[");
	for (int i = 0; i < n; i++)
		fprintf(f, ct[i].t_done ? "%s\"%s\"" : "%snull", i ? "," : "", ct[i].owner);
	fprintf(f, "],");
}
