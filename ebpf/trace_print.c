/* trace_print.c: acceptlab-trace's printers (see trace_print.h): the
 * per-worker table, with its CPU lists and log2 wakeup -> accept latency,
 * and the --timeline, which pairs each connection's ESTABLISHED with the
 * accept that returned it and tells what happened in between. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "acceptlab_trace.h"
#include "slots.h"
#include "trace_print.h"

#define MAX_ROWS (TRACE_WORKER_SLOTS + TRACE_MAX_WORKERS) /* worker threads the table shows: all the kernel side keeps */
#define MAX_WOKEN 64   /* wakeups (and EAGAINs) a timeline line lists */

/* ---- the per-worker table ---- */

/* The log2 bucket holding the median: [lo, hi) us, or -1 when empty. */
static int median_slot(const struct worker_stats *s)
{
	uint64_t total = 0, seen = 0;

	for (int k = 0; k < TRACE_HIST_SLOTS; k++)
		total += s->wake_to_accept[k];
	if (!total)
		return -1;
	for (int k = 0; k < TRACE_HIST_SLOTS; k++) {
		seen += s->wake_to_accept[k];
		if (seen * 2 >= total)
			return k;
	}
	return TRACE_HIST_SLOTS - 1;
}

static unsigned long slot_lo(int k)
{
	return k == 0 ? 0 : 1ul << k;
}

static void json_cpus(const char *name, const __u64 *v)
{
	int first = 1;

	printf(",\"%s\":{", name);
	for (int c = 0; c < TRACE_MAX_CPUS; c++) {
		if (!v[c])
			continue;
		printf("%s\"%d\":%llu", first ? "" : ",", c, (unsigned long long)v[c]);
		first = 0;
	}
	printf("}");
}

static void text_cpus(const __u64 *v, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int c = 0; c < TRACE_MAX_CPUS && off < len; c++)
		if (v[c])
			off += (size_t)snprintf(buf + off, len - off, "%s%d:%llu", off ? " " : "", c,
						(unsigned long long)v[c]);
	if (!off)
		snprintf(buf, len, "-");
}

struct row {
	__u32 tid;
	struct worker_stats s;
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->s.tgid != y->s.tgid)
		return x->s.tgid < y->s.tgid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Thread tid's row from its record w, with its open cycle ended, if it did
 * anything; n counts the rows. */
static void add_row(struct row *rows, int *n, __u32 tid, const struct trace_worker *w)
{
	struct row *r = &rows[*n];

	r->tid = tid;
	r->s = w->s;
	r->s.empty_returns += trace_cycle_empty(&w->c) ? 1 : 0;
	r->s.wasted += trace_cycle_wasted(&w->c) ? 1 : 0;
	if (r->s.wakeups || r->s.won || r->s.lost || r->s.wait_returns)
		(*n)++;
}

void trace_print_workers(int slots_fd, __u32 nslots, int workers_fd, double elapsed_s, int json, int timeline)
{
	static struct row rows[MAX_ROWS];
	static struct trace_worker_slot slots[TRACE_WORKER_SLOTS];
	__u32 key, next, *prev = NULL, count = slots_read(slots_fd, nslots, slots, sizeof(slots[0]));
	unsigned long long won = 0, lost = 0, wakeups = 0, wasted = 0;
	int n = 0;

	/* The array's claimed places, then the hash beside it. */
	for (__u32 i = 0; i < count && n < MAX_ROWS; i++)
		if (slots[i].tid)
			add_row(rows, &n, (__u32)slots[i].tid, &slots[i].w);
	while (bpf_map_get_next_key(workers_fd, prev, &next) == 0 && n < MAX_ROWS) {
		static struct trace_worker w;

		if (bpf_map_lookup_elem(workers_fd, &next, &w) == 0)
			add_row(rows, &n, next, &w);
		key = next;
		prev = &key;
	}
	qsort(rows, (size_t)n, sizeof(rows[0]), cmp_row);
	if (!json)
		printf("%-8s %-8s %7s %6s %6s %6s %7s %7s  %-14s %-14s %-14s %s\n", "pid", "tid", "woken", "won",
		       "lost", "wasted", "returns", "empty", "accept cpu", "waker cpu", "est cpu",
		       "wake->accept p50");
	for (int i = 0; i < n; i++) {
		const struct worker_stats *s = &rows[i].s;
		int m = median_slot(s);

		won += s->won;
		lost += s->lost;
		wakeups += s->wakeups;
		wasted += s->wasted;
		if (json) {
			int first = 1;
			printf("{\"type\":\"worker\",\"pid\":%u,\"tid\":%u,\"wakeups\":%llu,\"won\":%llu,\"lost\":%llu,"
			       "\"wasted\":%llu,\"wait_returns\":%llu,\"empty_returns\":%llu",
			       s->tgid, rows[i].tid, (unsigned long long)s->wakeups, (unsigned long long)s->won,
			       (unsigned long long)s->lost, (unsigned long long)s->wasted,
			       (unsigned long long)s->wait_returns, (unsigned long long)s->empty_returns);
			if (timeline)
				printf(",\"established\":%llu", (unsigned long long)s->established);
			json_cpus("accept_cpu", s->accept_cpu);
			json_cpus("waker_cpu", s->waker_cpu);
			if (timeline)
				json_cpus("est_cpu", s->est_cpu);
			printf(",\"wake_to_accept_us_log2\":{");
			for (int k = 0; k < TRACE_HIST_SLOTS; k++) {
				if (!s->wake_to_accept[k])
					continue;
				printf("%s\"%d\":%llu", first ? "" : ",", k, (unsigned long long)s->wake_to_accept[k]);
				first = 0;
			}
			printf("}");
			if (m >= 0)
				printf(",\"wake_to_accept_p50_us\":[%lu,%lu]}\n", slot_lo(m), 1ul << (m + 1));
			else
				printf(",\"wake_to_accept_p50_us\":null}\n");
		} else {
			char acc[64], wak[64], est[64], p50[32];
			text_cpus(s->accept_cpu, acc, sizeof(acc));
			text_cpus(s->waker_cpu, wak, sizeof(wak));
			if (timeline)
				text_cpus(s->est_cpu, est, sizeof(est));
			else
				snprintf(est, sizeof(est), "(--timeline)");
			if (m >= 0)
				snprintf(p50, sizeof(p50), "%lu-%lu us", slot_lo(m), 1ul << (m + 1));
			else
				snprintf(p50, sizeof(p50), "-");
			printf("%-8u %-8u %7llu %6llu %6llu %6llu %7llu %7llu  %-14s %-14s %-14s %s\n", s->tgid,
			       rows[i].tid, (unsigned long long)s->wakeups, (unsigned long long)s->won,
			       (unsigned long long)s->lost, (unsigned long long)s->wasted,
			       (unsigned long long)s->wait_returns, (unsigned long long)s->empty_returns, acc, wak,
			       est, p50);
		}
	}
	if (json)
		printf("{\"type\":\"summary\",\"duration_s\":%.3f,\"workers\":%d,\"wakeups\":%llu,\"won\":%llu,"
		       "\"lost\":%llu,\"wasted\":%llu}\n", elapsed_s, n, wakeups, won, lost, wasted);
	else
		printf("%d worker threads over %.1f s: %llu wakeups (%llu wasted), %llu accepts won, %llu lost\n", n,
		       elapsed_s, wakeups, wasted, won, lost);
}

/* ---- the timeline ---- */

static int cmp_event(const void *a, const void *b)
{
	const struct accept_event *x = a, *y = b;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

void trace_print_timeline(struct accept_event *events, size_t nevents, int json)
{
	uint64_t t0 = 0;
	int nconn = 0;

	qsort(events, nevents, sizeof(events[0]), cmp_event);
	if (!json)
		printf("\ntimeline (us from the first connection; cpu in brackets)\n");
	for (size_t i = 0; i < nevents; i++) {
		const struct accept_event *est = &events[i];
		const struct accept_event *win = NULL;
		struct { uint32_t tid, waker_cpu, ran_cpu, preempted; uint64_t wake_ns, ran_ns; char replaced[16]; } woken[MAX_WOKEN];
		uint32_t eagain[MAX_WOKEN];
		int nwoken = 0, neagain = 0, client_preempted = 0;
		size_t j;

		if (est->kind != EV_ESTABLISHED)
			continue;
		if (!t0)
			t0 = est->ts_ns;
		for (j = i + 1; j < nevents; j++) {
			const struct accept_event *e = &events[j];

			if (e->kind == EV_ACCEPT && e->sk == est->sk && e->ret >= 0) {
				win = e;
				break;
			}
			if (e->kind == EV_WAKE && nwoken < MAX_WOKEN) {
				woken[nwoken].tid = e->tid;
				woken[nwoken].waker_cpu = e->cpu;
				woken[nwoken].wake_ns = e->ts_ns;
				woken[nwoken].ran_ns = 0;
				woken[nwoken].ran_cpu = UINT32_MAX;
				woken[nwoken].preempted = 0;
				woken[nwoken].replaced[0] = '\0';
				nwoken++;
			} else if (e->kind == EV_SWITCH_IN) {
				for (int k = 0; k < nwoken; k++) {
					if (woken[k].tid != e->tid || woken[k].ran_ns)
						continue;
					woken[k].ran_ns = e->ts_ns;
					woken[k].ran_cpu = e->cpu;
					/* Still runnable (state 0) when switched out: preempted. */
					woken[k].preempted = e->preempt && e->prev_state == 0;
					memcpy(woken[k].replaced, e->comm, sizeof(woken[k].replaced));
					if (woken[k].preempted && e->prev_pid == est->tid)
						client_preempted = 1;
				}
			} else if (e->kind == EV_ACCEPT && e->ret == -11 && neagain < MAX_WOKEN) {
				eagain[neagain++] = e->tid;
			}
		}
		nconn++;
		if (json) {
			printf("{\"type\":\"conn\",\"n\":%d,\"t_us\":%.1f,\"est_cpu\":%u,\"client\":\"%s\","
			       "\"client_tid\":%u,\"rport\":%u,\"woken\":[",
			       nconn, (est->ts_ns - t0) / 1e3, est->cpu, est->comm, est->tid, est->rport);
			for (int k = 0; k < nwoken; k++) {
				printf("%s{\"tid\":%u,\"waker_cpu\":%u,\"after_us\":%.1f", k ? "," : "", woken[k].tid,
				       woken[k].waker_cpu, (woken[k].wake_ns - est->ts_ns) / 1e3);
				if (woken[k].ran_ns)
					printf(",\"ran_cpu\":%u,\"ran_after_us\":%.1f,\"replaced\":\"%s\",\"preempted\":%s",
					       woken[k].ran_cpu, (woken[k].ran_ns - est->ts_ns) / 1e3, woken[k].replaced,
					       woken[k].preempted ? "true" : "false");
				printf("}");
			}
			printf("],\"client_preempted\":%s,", client_preempted ? "true" : "false");
			if (win)
				printf("\"winner\":%u,\"winner_cpu\":%u,\"accept_after_us\":%.1f,", win->tid, win->cpu,
				       (win->ts_ns - est->ts_ns) / 1e3);
			else
				printf("\"winner\":null,");
			printf("\"eagain\":[");
			for (int k = 0; k < neagain; k++)
				printf("%s%u", k ? "," : "", eagain[k]);
			printf("]}\n");
		} else {
			printf("conn %3d  t=%9.1f  established [%u] by %s", nconn, (est->ts_ns - t0) / 1e3, est->cpu,
			       est->comm);
			for (int k = 0; k < nwoken; k++) {
				printf("; woke %u from [%u] +%.0f", woken[k].tid, woken[k].waker_cpu,
				       (woken[k].wake_ns - est->ts_ns) / 1e3);
				if (woken[k].ran_ns)
					printf(" ran [%u] +%.0f%s%s", woken[k].ran_cpu,
					       (woken[k].ran_ns - est->ts_ns) / 1e3,
					       woken[k].preempted ? " preempting " : "",
					       woken[k].preempted ? woken[k].replaced : "");
			}
			if (win)
				printf("; won by %u [%u] +%.0f", win->tid, win->cpu, (win->ts_ns - est->ts_ns) / 1e3);
			else
				printf("; not accepted while traced");
			for (int k = 0; k < neagain; k++)
				printf("%s%u", k ? "," : "; EAGAIN ", eagain[k]);
			printf("%s\n", client_preempted ? "  (client preempted by a worker)" : "");
		}
	}
}
