/* timing.h: the probe's clock, percentiles and per-connection latency output. */
#ifndef ACCEPTLAB_TIMING_H
#define ACCEPTLAB_TIMING_H

#include <stdint.h>
#include <stdio.h>

int64_t now_ns(void);
void sleep_ms(int ms);
/* Nearest-rank percentile of v[0..n) (sorts v); -1 when there are no samples. */
long long percentile(int64_t *v, int n, double p);

/* One connection of a burst as --latencies reports it. */
struct conn_time {
	int64_t t_start, t_done; /* connect issued; answer complete (0: never) */
	const char *owner;       /* the worker id that answered ("" if none); NULL in every
	                          * entry when no worker is attributed (--worker-from none) */
};

/* Writes "completion_us":C,"latency_us":[...],"served_by":[...], for a
 * round that began at t0: C is t0 to the last answer (null if none was
 * answered); each latency is its connection's connect to its complete
 * answer (null if unanswered), served_by the worker id (null likewise),
 * left out when ct[0].owner is NULL (no worker attributed). */
void json_latencies(FILE *f, int64_t t0, const struct conn_time *ct, int n);

#endif
