/* diagnosis.c: from what was detected and traced to the diagnosis's fields
 * and its verdict (see diagnosis.h). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "diagnosis.h"
#include "../common/fair_split.h"

struct diag_row *diagnosis_find(struct diagnosis *g, int tid)
{
	for (int i = 0; i < g->nrows; i++)
		if (g->rows[i].tid == tid)
			return &g->rows[i];
	return NULL;
}

struct diag_row *diagnosis_row(struct diagnosis *g, int pid, int tid)
{
	struct diag_row *r = diagnosis_find(g, tid);

	if (r)
		return r;
	if (g->nrows == DIAG_MAX_ROWS)
		return NULL;
	r = &g->rows[g->nrows++];
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->tid = tid;
	return r;
}

static int process_waits_on_listener(const struct detection *d, int pid)
{
	for (int i = 0; i < d->nt; i++)
		if (d->t[i].pid == pid && (d->t[i].wait == WAIT_EPOLL || d->t[i].wait == WAIT_ACCEPT))
			return 1;
	return 0;
}

void diagnosis_row_wait(struct diag_row *r, const struct detection *d)
{
	for (int i = 0; i < d->nt; i++)
		if (d->t[i].tid == r->tid) {
			r->wait = d->t[i].wait;
			r->events = d->t[i].events;
			if (!r->comm[0])
				memcpy(r->comm, d->t[i].comm, sizeof(r->comm));
			return;
		}
}

static int waits_on_port(const struct diag_row *r)
{
	return r->wait == WAIT_EPOLL || r->wait == WAIT_ACCEPT || r->wait == WAIT_EPOLL_WITHOUT || r->ctl_add;
}

int diagnosis_is_pool(const struct diag_row *r)
{
	/* An epoll without the listener is an accept mutex's idle waiter only
	 * in a thread that accepts or registers the listener; one that never
	 * does (a reactor buffering requests for its process) is a pool's. */
	int waits = waits_on_port(r) && !(r->wait == WAIT_EPOLL_WITHOUT && !r->ctl_add);

	return r->tid && r->received && !r->received_cross && !r->accepted && !waits;
}

void diagnosis_pool_sample(struct diagnosis *g, int pid, long long held)
{
	for (int i = 0; i < g->npool_held; i++)
		if (g->pool_held[i].pid == pid) {
			if (held > g->pool_held[i].held_max)
				g->pool_held[i].held_max = held;
			return;
		}
	if (g->npool_held < DIAG_MAX_ROWS) {
		g->pool_held[g->npool_held].pid = pid;
		g->pool_held[g->npool_held++].held_max = held;
	}
}

/* pid is the parent of a holder that waits on the listener: a supervisor
 * (Node's cluster primary, a prefork master) with an event loop of its
 * own, not an accept mutex's idle worker (those are siblings). */
static int parent_of_a_waiter(const struct detection *d, int pid)
{
	for (int i = 0; i < d->nh; i++)
		if (d->h[i].ppid == pid && process_waits_on_listener(d, d->h[i].pid))
			return 1;
	return 0;
}

void diagnosis_rows_from_detection(struct diagnosis *g, const struct detection *d)
{
	for (int i = 0; i < d->nt; i++) {
		const struct detect_thread *t = &d->t[i];
		struct diag_row *r;

		if (t->wait != WAIT_EPOLL && t->wait != WAIT_ACCEPT &&
		    !(t->wait == WAIT_EPOLL_WITHOUT && !process_waits_on_listener(d, t->pid) &&
		      !parent_of_a_waiter(d, t->pid)))
			continue;
		if (!(r = diagnosis_row(g, t->pid, t->tid)))
			return;
		memcpy(r->comm, t->comm, sizeof(r->comm));
		r->wait = t->wait;
		r->events = t->events;
	}
}

const char *diagnosis_wait_word(const struct diag_row *r)
{
	switch (r->wait) {
	case WAIT_EPOLL:
		return r->events & DETECT_EPOLLEXCLUSIVE ? "epoll-exclusive" : "epoll";
	case WAIT_ACCEPT:
		return "accept";
	case WAIT_EPOLL_WITHOUT:
		return "epoll-no-listener";
	case WAIT_POLL:
		return "poll";
	default:
		return NULL;
	}
}

int diagnosis_in_split(const struct diagnosis *g, const struct diag_row *r)
{
	if (g->split_of && strcmp(g->split_of, "served") == 0)
		return !(r->served == 0 && r->accepted > 0 && r->handed_off > 0);
	return 1;
}

/* ---- the verdict's text ---- */

static void say(struct diagnosis *g, const char *fmt, ...)
{
	size_t len = strlen(g->verdict);
	va_list ap;

	if (len >= sizeof(g->verdict) - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(g->verdict + len, sizeof(g->verdict) - len, fmt, ap);
	va_end(ap);
}

static void detail(struct diagnosis *g, const char *fmt, ...)
{
	size_t len = strlen(g->wait_detail);
	va_list ap;

	if (len >= sizeof(g->wait_detail) - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(g->wait_detail + len, sizeof(g->wait_detail) - len, fmt, ap);
	va_end(ap);
}

/* ---- the mechanism ---- */

/* Kinds of wait seen, as bits. */
enum { K_EPOLL = 1, K_EXCL = 2, K_ACCEPT = 4, K_POLL = 8 };

static void classify_listener(struct diagnosis *g, const struct detection *d)
{
	unsigned long long groups[DETECT_MAX_LISTENERS];
	int ngroups = 0, reuseport = 0;

	g->listeners = d->nl;
	g->addresses = 0;
	for (int i = 0; i < d->nl; i++) {
		int same = 0, first = 1;

		for (int j = 0; j < d->nl; j++) {
			if (d->l[j].family != d->l[i].family || strcmp(d->l[j].addr, d->l[i].addr) != 0)
				continue;
			if (j < i)
				first = 0;
			same++;
		}
		g->addresses += first;
		if (same > 1)
			reuseport = 1;
		if (d->l[i].group) {
			int seen = 0;
			for (int k = 0; k < ngroups; k++)
				seen |= groups[k] == d->l[i].group;
			if (!seen)
				groups[ngroups++] = d->l[i].group;
		}
	}
	g->groups = ngroups;
	g->listener = reuseport ? "reuseport" : "shared";
	g->selector = reuseport ? (g->sel.prog_id ? "bpf" : "hash") : NULL;
}

static void classify_wait(struct diagnosis *g, const struct detection *d)
{
	unsigned kinds = 0, et = 0, lt = 0;
	int with = 0, without = 0, accepting = 0, polling = 0;

	for (int i = 0; i < g->nrows; i++) {
		const struct diag_row *r = &g->rows[i];
		unsigned ev = r->wait == WAIT_EPOLL ? r->events : r->ctl_events;

		if (r->wait == WAIT_EPOLL || r->ctl_events) {
			kinds |= ev & DETECT_EPOLLEXCLUSIVE ? K_EXCL : K_EPOLL;
			if (ev & DETECT_EPOLLET)
				et = 1;
			else
				lt = 1;
		}
		if (r->wait == WAIT_ACCEPT) {
			kinds |= K_ACCEPT;
			accepting++;
		}
		/* poll() or select(): /proc does not say on what, the trace
		 * does: a thread that accepts the port's connections waits on
		 * its listener there (level-triggered, every poller woken). */
		if (r->wait == WAIT_POLL && r->accepted) {
			kinds |= K_POLL;
			lt = 1;
			polling++;
		}
		with += r->wait == WAIT_EPOLL;
		without += r->wait == WAIT_EPOLL_WITHOUT;
	}
	/* Every worker busy when sampled: the registrations still tell. */
	if (!kinds)
		for (int i = 0; i < d->nreg; i++) {
			kinds |= d->reg[i].events & DETECT_EPOLLEXCLUSIVE ? K_EXCL : K_EPOLL;
			if (d->reg[i].events & DETECT_EPOLLET)
				et = 1;
			else
				lt = 1;
		}
	switch (kinds) {
	case 0: g->wait = NULL; break;
	case K_EPOLL: g->wait = "epoll"; break;
	case K_EXCL: g->wait = "epoll-exclusive"; break;
	case K_ACCEPT: g->wait = "accept"; break;
	case K_POLL: g->wait = "poll"; break;
	default: g->wait = "mixed"; break;
	}
	g->triggered = et && lt ? "mixed" : et ? "edge" : lt ? "level" : NULL;
	g->mutex_hint = with > 0 && without > 0 && kinds == K_EPOLL;

	g->wait_detail[0] = '\0';
	detail(g, "%d listener registration%s in the epolls of %d holder%s", d->nreg, d->nreg == 1 ? "" : "s",
	       d->nh, d->nh == 1 ? "" : "s");
	if (with)
		detail(g, "; %d thread%s waiting in epoll_wait with a listener", with, with == 1 ? "" : "s");
	if (without)
		detail(g, "; %d waiting in epoll_wait without one", without);
	if (accepting)
		detail(g, "; %d blocked in accept()", accepting);
	if (polling)
		detail(g, "; %d waiting in poll() or select() that accepted the port's connections", polling);
	if (g->wait && strcmp(g->wait, "mixed") == 0) {
		detail(g, " (");
		for (int i = 0, n = 0; i < g->nrows && n < 8; i++) {
			const char *w = diagnosis_wait_word(&g->rows[i]);
			if (!w)
				continue;
			detail(g, "%s%d/%d %s", n++ ? ", " : "", g->rows[i].pid, g->rows[i].tid, w);
		}
		detail(g, ")");
	}
	g->shared_epoll = 0;
	for (int i = 0; i < d->nt; i++)
		if (d->t[i].epoll_shared && d->t[i].wait == WAIT_EPOLL) {
			detail(g, "; threads of pid %d share one epoll", d->t[i].pid);
			g->shared_epoll = 1;
			break;
		}
}

/* Each process's pool threads become one row (tid 0): with a thread per
 * connection there would be a row per connection, and the worker is the
 * process. */
static void collapse_pools(struct diagnosis *g)
{
	int n = 0;

	g->handoff_pool = g->handoff_balancing = 0;
	for (int i = 0; i < g->nrows; i++) {
		const struct diag_row *r = &g->rows[i];

		if (diagnosis_is_pool(r))
			g->handoff_pool = 1;
		else if (r->received)
			g->handoff_balancing = 1;
	}
	if (!g->handoff_pool)
		return;
	for (int i = 0; i < g->nrows; i++) {
		struct diag_row r = g->rows[i], *p = NULL;

		if (!diagnosis_is_pool(&r)) {
			g->rows[n++] = r;
			continue;
		}
		for (int j = 0; j < n && !p; j++)
			if (g->rows[j].tid == 0 && g->rows[j].pid == r.pid)
				p = &g->rows[j];
		if (!p) {
			p = &g->rows[n++];
			memset(p, 0, sizeof(*p));
			p->pid = r.pid;
			memcpy(p->comm, r.comm, sizeof(p->comm));
			for (int k = 0; k < g->npool_held; k++)
				if (g->pool_held[k].pid == r.pid)
					p->held_max = g->pool_held[k].held_max;
		}
		p->threads++;
		p->served += r.served;
		p->received += r.received;
		p->held_sum += r.held_sum;
		p->wakeups += r.wakeups;
		p->wasted += r.wasted;
	}
	g->nrows = n;
	/* The process is the worker: what its acceptors read first themselves
	 * (an acceptor that reads a request before handing it on) counts for
	 * its pool's row too, and an acceptor is left with its accepts only. */
	for (int i = 0; i < g->nrows; i++) {
		struct diag_row *a = &g->rows[i];

		if (!a->tid || !a->handed_off || !a->served)
			continue;
		for (int j = 0; j < g->nrows; j++)
			if (!g->rows[j].tid && g->rows[j].pid == a->pid) {
				g->rows[j].served += a->served;
				a->served = 0;
				break;
			}
	}
}

static void classify_variant(struct diagnosis *g)
{
	int churn, excl, edge, ok_wait;

	g->churn_add = g->churn_del = 0;
	g->churn_threads = 0;
	churn = 0;
	for (int i = 0; i < g->nrows; i++) {
		const struct diag_row *r = &g->rows[i];

		g->churn_add += r->ctl_add;
		g->churn_del += r->ctl_del;
		g->churn_threads += r->ctl_add || r->ctl_del;
		/* Re-registration: a thread that adds and deletes the listener,
		 * or adds it twice. A worker (re)started during the watch adds
		 * it once; one stopping deletes it once. */
		if ((r->ctl_add && r->ctl_del) || r->ctl_add > 1)
			churn = 1;
	}
	/* Known when traced and some connection was read (or handed off). */
	g->handoff = g->traced && (g->served || g->handoffs) ? g->handoffs > 0 : -1;
	excl = g->wait && strcmp(g->wait, "epoll-exclusive") == 0;
	edge = g->triggered && strcmp(g->triggered, "edge") == 0;
	ok_wait = g->wait != NULL;

	if (strcmp(g->listener, "reuseport") == 0) {
		if (g->sel.prog_id)
			g->closest_variant = "reuseport-bpf";
		else if (g->handoff_balancing)
			g->closest_variant = "handoff";
		else
			g->closest_variant = "reuseport";
	} else if (g->handoff_balancing) {
		g->closest_variant = "fdpass";
	} else if (g->wait && strcmp(g->wait, "accept") == 0) {
		g->closest_variant = "blocking";
	} else if (churn && excl) {
		g->closest_variant = "exclusive-reorder";
	} else if (churn || g->mutex_hint) {
		g->closest_variant = "mutex";
	} else if (excl) {
		g->closest_variant = edge ? "exclusive" : "exclusive-reorder";
	} else if (ok_wait && strcmp(g->wait, "epoll") == 0) {
		g->closest_variant = edge ? "bare" : "lt";
	} else if (ok_wait && strcmp(g->wait, "poll") == 0) {
		g->closest_variant = "lt"; /* level-triggered readiness, every waiter woken, as lt's epoll */
	} else if (ok_wait && strcmp(g->wait, "mixed") == 0) {
		g->closest_variant = edge ? "bare" : "lt";
	} else {
		g->closest_variant = NULL;
	}
}

/* ---- the split ---- */

static unsigned long long count_of(const struct diagnosis *g, const struct diag_row *r)
{
	return strcmp(g->split_of, "served") == 0 ? r->served : r->accepted;
}

static int cmp_desc(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* The split against a fair random one of as many connections over as many
 * workers: how likely its largest share is at least this large, and how
 * likely it is outside 2:1 (common/fair_split.h, exact). */
static void classify_fair(struct diagnosis *g, const unsigned long long *desc, int n)
{
	unsigned long long total = 0;

	for (int i = 0; i < n; i++)
		total += desc[i];
	g->fair_k = n;
	g->fair_n = total > (unsigned long long)LONG_MAX ? LONG_MAX : (long)total;
	g->fair_max = n ? (long)desc[0] : 0;
	if (n < 2) {
		snprintf(g->fair_why, sizeof(g->fair_why), "one worker in the split");
		return;
	}
	if (n > FAIR_SPLIT_MAX_K || total > (unsigned long long)FAIR_SPLIT_MAX_N) {
		snprintf(g->fair_why, sizeof(g->fair_why), "beyond the sizes it is computed exactly for (%ld connections, %d workers)",
			 FAIR_SPLIT_MAX_N, FAIR_SPLIT_MAX_K);
		return;
	}
	g->fair_chance = fair_split_chance_max_at_least(g->fair_n, n, g->fair_max);
	g->fair_outside = fair_split_chance_outside_2to1(g->fair_n, n);
	if (isnan(g->fair_chance))
		snprintf(g->fair_why, sizeof(g->fair_why), "not computed: %s", strerror(errno));
	else
		g->fair_why[0] = '\0';
}

static void classify_split(struct diagnosis *g)
{
	static unsigned long long counts[DIAG_MAX_ROWS];
	unsigned long long served = 0, accepted = 0;
	size_t off = 0;
	int n = 0;

	g->split_of = NULL;
	g->split[0] = '\0';
	g->within_2to1 = -1;
	g->fair_n = g->fair_max = 0;
	g->fair_k = 0;
	g->fair_chance = g->fair_outside = NAN;
	snprintf(g->fair_why, sizeof(g->fair_why), "no split");
	if (!g->traced)
		return;
	for (int i = 0; i < g->nrows; i++) {
		served += g->rows[i].served;
		accepted += g->rows[i].accepted;
	}
	if (served)
		g->split_of = "served";
	else if (accepted)
		g->split_of = "accepted";
	else
		return;
	for (int i = 0; i < g->nrows; i++)
		if (diagnosis_in_split(g, &g->rows[i]))
			counts[n++] = count_of(g, &g->rows[i]);
	qsort(counts, (size_t)n, sizeof(counts[0]), cmp_desc);
	for (int i = 0; i < n && off < sizeof(g->split) - 24; i++)
		off += (size_t)snprintf(g->split + off, sizeof(g->split) - off, "%s%llu", i ? "/" : "", counts[i]);
	g->within_2to1 = n > 0 && counts[n - 1] > 0 && counts[0] <= 2 * counts[n - 1];
	classify_fair(g, counts, n);
}

/* ---- the verdict ---- */

static const struct diag_row *busiest(const struct diagnosis *g)
{
	const struct diag_row *best = NULL;

	for (int i = 0; i < g->nrows; i++)
		if (diagnosis_in_split(g, &g->rows[i]) &&
		    (!best || count_of(g, &g->rows[i]) > count_of(g, best)))
			best = &g->rows[i];
	return best;
}

void diagnosis_chance_text(double p, char *out, size_t len)
{
	double pct = p * 100;

	if (p <= 0)
		snprintf(out, len, "below 1e-306 %%");
	else if (pct >= 0.01)
		snprintf(out, len, "%.3g %%", pct);
	else
		snprintf(out, len, "%.2e %%", pct);
}

/* Whether the split is beyond what chance gives: a fair random split of as
 * many connections over as many workers, each connection to any worker
 * with equal chance (what a reuseport group's hash does). */
static void verdict_fair(struct diagnosis *g)
{
	char p[48], out[48];
	long fair_share;

	if (g->fair_k < 2)
		return;
	if (isnan(g->fair_chance)) {
		say(g, "Its chance under a fair random split is not given: %s. ", g->fair_why);
		return;
	}
	fair_share = (g->fair_n + g->fair_k - 1) / g->fair_k;
	diagnosis_chance_text(g->fair_chance, p, sizeof(p));
	diagnosis_chance_text(g->fair_outside, out, sizeof(out));
	if (g->fair_max <= fair_share)
		say(g, "That is as even as %ld connection%s over %d workers can be", g->fair_n, g->fair_n == 1 ? "" : "s",
		    g->fair_k);
	else
		say(g, "A fair random split of %ld connections over %d workers (each connection to any worker with "
		       "equal chance) gives a busiest worker with %ld or more with chance %s: %s (%s %g %%)", g->fair_n,
		    g->fair_k, g->fair_max, p,
		    g->fair_chance < DIAG_BEYOND_CHANCE ? "this skew is beyond chance, the mechanism's own doing"
							 : "no more skewed than chance gives",
		    g->fair_chance < DIAG_BEYOND_CHANCE ? "below" : "not below", DIAG_BEYOND_CHANCE * 100);
	say(g, "; a fair split of that many over that many is outside 2:1 with chance %s. ", out);
}

int diagnosis_split_workers(const struct diagnosis *g)
{
	int n = 0;

	for (int i = 0; i < g->nrows; i++)
		n += diagnosis_in_split(g, &g->rows[i]);
	return n;
}

static void verdict_split(struct diagnosis *g)
{
	unsigned long long total = 0;
	const struct diag_row *top;
	int n = 0;

	if (!g->traced) {
		say(g, "Not traced, so no split: who accepts and who serves each connection needs the trace (root). ");
		return;
	}
	if (!g->split_of) {
		say(g, "No connection to port %d was accepted while traced%s. ", g->port,
		    g->mode && strcmp(g->mode, "passive") == 0 ? ": the watch saw no traffic (try --load)" : "");
		return;
	}
	for (int i = 0; i < g->nrows; i++)
		if (diagnosis_in_split(g, &g->rows[i])) {
			total += count_of(g, &g->rows[i]);
			n++;
		}
	top = busiest(g);
	say(g, "Connections %s: %s over %d worker%s, %s 2:1", g->split_of, g->split, n, n == 1 ? "" : "s",
	    g->within_2to1 == 1 ? "within" : "not within");
	if (top && total && top->tid)
		say(g, " (the busiest, pid %d tid %d, %s %llu of %llu)", top->pid, top->tid, g->split_of,
		    count_of(g, top), total);
	else if (top && total)
		say(g, " (the busiest, pid %d's pool of %d threads, %s %llu of %llu)", top->pid, top->threads,
		    g->split_of, count_of(g, top), total);
	say(g, ". ");
	verdict_fair(g);
	if (strcmp(g->split_of, "accepted") == 0)
		say(g, "No connection's bytes were read while traced (--tcp, or a protocol where the client waits), "
		       "so the split is of accepts. ");
}

static void verdict_mechanism(struct diagnosis *g)
{
	const char *v = g->closest_variant;
	int processes = 0, waiters = 0;

	for (int i = 0; i < g->nrows; i++) {
		int first = 1;
		for (int j = 0; j < i; j++)
			first &= g->rows[j].pid != g->rows[i].pid;
		processes += first;
		waiters += waits_on_port(&g->rows[i]) || (g->rows[i].wait == WAIT_POLL && g->rows[i].accepted);
	}
	if (strcmp(g->listener, "reuseport") == 0) {
		say(g, "%d listening sockets in a SO_REUSEPORT group", g->listeners);
		if (g->sel.prog_id)
			say(g, ", steered by a BPF program (id %u, found by %s): it picks the socket for each new "
			       "connection, so the split is the program's policy", g->sel.prog_id, g->sel.how);
		else
			say(g, " with no BPF selector%s: the kernel picks a socket by a hash of each connection's "
			       "addresses and ports, whether its worker is busy or idle, so the split is a random one",
			    g->sel.iterator_ran ? " (every listener's group read by the iterator)" : "");
		say(g, ". ");
	} else {
		if (!processes) {
			say(g, "One listening socket%s. ", g->addresses > 1 ? " per address" : "");
			goto handoff;
		}
		say(g, "One listening socket%s shared by %d process%s, %d thread%s waiting on it",
		    g->addresses > 1 ? " per address" : "", processes, processes == 1 ? "" : "es", waiters,
		    waiters == 1 ? "" : "s");
		if (!g->wait)
			say(g, "; none was seen waiting on it (all busy when sampled, or waiting in poll/select)");
		else if (strcmp(g->wait, "accept") == 0)
			say(g, ", blocked in accept(): the kernel wakes one waiter per connection, the one that has "
			       "waited longest, so the split follows who gets back to accept() first");
		else if (v && strcmp(v, "mutex") == 0 && (g->churn_add || g->churn_del))
			say(g, ", but only one has it in its epoll at a time (%llu adds and %llu deletes of the listener "
			       "by %d threads while traced): an accept mutex; the holder takes every connection that "
			       "arrives while it holds it",
			    g->churn_add, g->churn_del, g->churn_threads);
		else if (v && strcmp(v, "mutex") == 0)
			say(g, ", but only some have it in their epoll (the others wait on epolls without it) and no "
			       "thread added or deleted it while traced: an accept mutex whose holder kept it; the "
			       "holder takes every connection that arrives while it holds it");
		else if (v && strcmp(v, "exclusive-reorder") == 0)
			say(g, ", registered EPOLLEXCLUSIVE and level-triggered: the kernel wakes one waiter, the first "
			       "on the listener's wait queue%s",
			    g->churn_add || g->churn_del ? "; the listener is deleted and re-added (nginx's re-add), "
							   "which sends a worker to the back of the queue"
							 : "");
		else if (g->wait && strcmp(g->wait, "epoll-exclusive") == 0)
			say(g, ", registered EPOLLEXCLUSIVE (%s-triggered): the kernel wakes one waiter per connection, "
			       "the first idle one in the order the epolls registered the listener, so the worker that "
			       "registered first takes connections whenever it is idle%s",
			    g->triggered ? g->triggered : "?",
			    g->triggered && strcmp(g->triggered, "edge") == 0 ? ", and accepts until EAGAIN" : "");
		else if (strcmp(g->wait, "epoll") == 0 && g->shared_epoll)
			say(g, ", all on one shared epoll (%s-triggered): epoll_wait's waiters are woken "
			       "last in, first out, so the thread that most recently began waiting gets the next "
			       "connection",
			    g->triggered ? g->triggered : "?");
		else if (strcmp(g->wait, "poll") == 0)
			say(g, ", each in poll() or select() (level-triggered, not exclusive: the trace saw those "
			       "threads accept the port's connections): every idle waiter is woken for each connection "
			       "and the first to reach accept() takes it");
		else if (strcmp(g->wait, "epoll") == 0)
			say(g, ", each in its own epoll (%s-triggered, not exclusive): every idle waiter is woken for "
			       "each connection and the first to reach accept() takes it%s",
			    g->triggered ? g->triggered : "?",
			    g->triggered && strcmp(g->triggered, "edge") == 0
				    ? ", then keeps accepting until EAGAIN"
				    : "");
		else
			say(g, ", waiting in different ways (%s)", g->wait_detail);
		say(g, ". ");
	}
handoff:
	if (g->handoff_balancing)
		say(g, "The acceptor is not always the server: %llu of %llu connections were first read by another "
		       "thread than the one that accepted them, %s (a hand-off: descriptor passing or a queue). ",
		    g->handoffs, g->served, g->handoff_pool ? "some by a peer or another process" :
		    "a peer waiting on the port or another process");
	if (g->handoff_pool)
		say(g, "%s hands the connections it accepts to threads of its own that do not wait on the port (a "
		       "pool, or a thread per connection): those threads are one row per process, the process is the "
		       "worker, and its share is decided where it accepts. ",
		    g->handoff_balancing ? "At least one process" : "Each process");
	else if (g->handoff == 0 && g->served)
		say(g, "Every connection was served by the thread that accepted it. ");
	if (v)
		say(g, "The closest acceptlab variant is %s. ", v);
	else
		say(g, "No acceptlab variant matches. ");
}

static void verdict_why(struct diagnosis *g)
{
	unsigned long long wakeups = 0, wasted = 0, acc_max = 0, acc_total = 0;
	const struct diag_row *never = NULL, *acc_top = NULL;
	int n = 0;

	if (!g->traced || !g->split_of)
		return;
	for (int i = 0; i < g->nrows; i++) {
		const struct diag_row *r = &g->rows[i];

		wakeups += r->wakeups;
		wasted += r->wasted;
		acc_total += r->accepted;
		if (r->accepted > acc_max) {
			acc_max = r->accepted;
			acc_top = r;
		}
		if (diagnosis_in_split(g, r)) {
			n++;
			if (!r->wakeups && !r->accepted && !r->served)
				never = r;
		}
	}
	if (wasted)
		say(g, "%llu of %llu wakeups were wasted (woken, lost the accept to another worker, woken again before it won one). ",
		    wasted, wakeups);
	if (never && n > 1)
		say(g, "pid %d tid %d was never woken while traced: busy, stuck, or not waiting on this port. ",
		    never->pid, never->tid);
	if (g->handoff_balancing && acc_top && acc_total && acc_max * 10 >= acc_total * 9 && g->within_2to1 == 1)
		say(g, "One thread accepted nearly every connection (pid %d tid %d, %llu of %llu) and handed them "
		       "on, which is what evened the serving. ",
		    acc_top->pid, acc_top->tid, acc_max, acc_total);
	if (g->handoff == 0 && acc_top && acc_total >= 4 && acc_max * 10 >= acc_total * 9 && n > 1)
		say(g, "One thread accepted nearly every connection (pid %d tid %d, %llu of %llu) and nothing hands "
		       "connections on. ",
		    acc_top->pid, acc_top->tid, acc_max, acc_total);
	if (g->unaccepted_reads)
		say(g, "%llu connections were read by a thread before any traced accept returned them (another "
		       "server's, or --pid left their acceptor out). ",
		    g->unaccepted_reads);
}

/* ---- each round ---- */

void diagnosis_mark(const struct diagnosis *g, struct diag_mark *m)
{
	m->n = 0;
	for (int i = 0; i < g->nrows && m->n < DIAG_MAX_ROWS; i++, m->n++) {
		m->at[m->n].tid = g->rows[i].tid;
		m->at[m->n].accepted = g->rows[i].accepted;
		m->at[m->n].served = g->rows[i].served;
	}
}

static void marked(const struct diag_mark *m, int tid, unsigned long long *accepted, unsigned long long *served)
{
	*accepted = *served = 0;
	for (int i = 0; m && i < m->n; i++)
		if (m->at[i].tid == tid) {
			*accepted = m->at[i].accepted;
			*served = m->at[i].served;
			return;
		}
}

/* Whether thread tid's row is out of the whole watch's split (an acceptor
 * that handed its connections on: diagnosis_in_split), in w, collapsed. */
static int out_of_split(const struct diagnosis *w, int tid)
{
	for (int i = 0; i < w->nrows; i++)
		if (w->rows[i].tid == tid)
			return !diagnosis_in_split(w, &w->rows[i]);
	return 0;
}

void diagnosis_rounds(struct diagnosis *g, const struct diag_mark *marks, int n)
{
	static struct diagnosis t, whole;

	/* The rows out of each round's split are those out of the whole
	 * watch's, so a worker is one count in every round, 0 when the round
	 * left it out. */
	whole = *g;
	collapse_pools(&whole);
	classify_split(&whole);
	g->nrounds = 0;
	for (int k = 0; k < n && k < DIAG_MAX_ROUNDS; k++) {
		struct diag_round *out = &g->round[g->nrounds++];
		int kept = 0;

		t = *g;
		for (int i = 0; i < t.nrows; i++) {
			struct diag_row *r = &t.rows[i];
			unsigned long long a1, s1, a0, s0;

			marked(&marks[k], r->tid, &a1, &s1);
			marked(k ? &marks[k - 1] : NULL, r->tid, &a0, &s0);
			r->accepted = a1 - a0;
			r->served = s1 - s0;
		}
		collapse_pools(&t);
		for (int i = 0; i < t.nrows; i++)
			if (!t.rows[i].tid || !out_of_split(&whole, t.rows[i].tid))
				t.rows[kept++] = t.rows[i];
		t.nrows = kept;
		classify_split(&t);
		memcpy(out->split, t.split, sizeof(out->split));
		out->split_of = t.split_of;
		out->within_2to1 = t.within_2to1;
		out->connections = t.fair_n;
		out->fair_chance = t.fair_chance;
	}
}

/* ---- the verdict ---- */

void diagnosis_classify(struct diagnosis *g, const struct detection *d)
{
	g->holders = d->nh;
	collapse_pools(g);
	classify_listener(g, d);
	classify_wait(g, d);
	classify_variant(g);
	classify_split(g);
	g->verdict[0] = '\0';
	if (!d->nh)
		say(g, "No process holding the port's listeners could be read (another PID namespace, or another "
		       "user's processes without root): no workers, and nothing traced. ");
	verdict_split(g);
	verdict_mechanism(g);
	verdict_why(g);
	if (g->partial)
		say(g, "Partial: %s.", g->partial_why);
	/* No trailing space. */
	for (size_t len = strlen(g->verdict); len && g->verdict[len - 1] == ' ';)
		g->verdict[--len] = '\0';
}
