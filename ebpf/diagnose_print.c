/* diagnose_print.c: bin/acceptlab-diagnose's printers (see
 * diagnose_print.h). */
#include <math.h>
#include <string.h>
#include <sys/socket.h>

#include "diagnose_print.h"

void json_string(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static const char *tf(int v)
{
	return v ? "true" : "false";
}

static const char *thread_wait_word(enum detect_wait w)
{
	switch (w) {
	case WAIT_EPOLL: return "epoll";
	case WAIT_EPOLL_WITHOUT: return "epoll-no-listener";
	case WAIT_ACCEPT: return "accept";
	case WAIT_POLL: return "poll";
	default: return NULL;
	}
}

void diag_print_detected_json(const struct detection *d, const struct selector_found *sel)
{
	printf("{\"kind\":\"detected\",\"port\":%d,\"listeners\":[", d->port);
	for (int i = 0; i < d->nl; i++) {
		const struct detect_listener *l = &d->l[i];
		printf("%s{\"inode\":%lu,\"cookie\":%llu,\"family\":\"%s\",\"address\":", i ? "," : "", l->inode,
		       l->cookie, l->family == AF_INET6 ? "ipv6" : "ipv4");
		json_string(stdout, l->addr);
		printf(",\"v6only\":%s,\"queued\":%u,\"backlog\":%u,\"holders\":%d,\"reuseport\":%s,\"prog_id\":%u}",
		       tf(l->v6only), l->queued, l->backlog, l->holders,
		       l->reuseport < 0 ? "null" : tf(l->reuseport), l->prog_id);
	}
	printf("],\"holders\":[");
	for (int i = 0; i < d->nh; i++) {
		const struct detect_holder *h = &d->h[i];
		int first = 1;
		printf("%s{\"pid\":%d,\"ppid\":%d,\"uid\":%d,\"comm\":", i ? "," : "", h->pid, h->ppid, h->uid);
		json_string(stdout, h->comm);
		printf(",\"fds\":[");
		for (int j = 0; j < d->nfds; j++)
			if (d->fds[j].pid == h->pid) {
				printf("%s{\"fd\":%d,\"inode\":%lu}", first ? "" : ",", d->fds[j].fd,
				       d->l[d->fds[j].listener].inode);
				first = 0;
			}
		printf("],\"unreadable\":%s}", tf(h->fdinfo_unreadable));
	}
	printf("],\"registrations\":[");
	for (int i = 0; i < d->nreg; i++) {
		const struct detect_reg *r = &d->reg[i];
		printf("%s{\"pid\":%d,\"epfd\":%d,\"inode\":%lu,\"events\":\"0x%x\",\"exclusive\":%s,\"edge\":%s}",
		       i ? "," : "", r->pid, r->epfd, d->l[r->listener].inode, r->events,
		       tf(r->events & DETECT_EPOLLEXCLUSIVE), tf(r->events & DETECT_EPOLLET));
	}
	printf("],\"waiting\":[");
	for (int i = 0, n = 0; i < d->nt; i++) {
		const struct detect_thread *t = &d->t[i];
		const char *w = thread_wait_word(t->wait);
		if (!w)
			continue;
		printf("%s{\"pid\":%d,\"tid\":%d,\"comm\":", n++ ? "," : "", t->pid, t->tid);
		json_string(stdout, t->comm);
		printf(",\"wait\":\"%s\",\"fd\":%d,\"shared_epoll\":%s}", w, t->fd, tf(t->epoll_shared));
	}
	printf("],\"left_out\":%d,\"selector\":{\"prog_id\":%u,\"how\":", d->left_out, sel->prog_id);
	json_string(stdout, sel->how);
	printf(",\"iterator\":%s,\"sockarray\":%s,\"prog_fd\":%s,\"note\":", tf(sel->iterator_ran),
	       tf(sel->sockarray_ran), tf(sel->prog_fd_ran));
	json_string(stdout, sel->note[0] ? sel->note : NULL);
	printf("}}\n");
}

/* A chance, to full precision (%.17g round-trips a double); null for NAN. */
static void json_double(double v)
{
	if (isnan(v))
		printf("null");
	else
		printf("%.17g", v);
}

static void json_count(const char *name, unsigned long long v, int traced)
{
	if (traced)
		printf(",\"%s\":%llu", name, v);
	else
		printf(",\"%s\":null", name);
}

static double held_mean(const struct diagnosis *g, const struct diag_row *r)
{
	return g->samples ? r->held_sum / g->samples : 0;
}

static void print_advice_json(const struct advice *a)
{
	if (!a->found) {
		printf(",\"advice\":null,\"advice_why\":");
		json_string(stdout, a->why);
		return;
	}
	printf(",\"advice\":{\"run\":");
	json_string(stdout, a->run);
	printf(",\"workers\":%d,\"diagnosed_workers\":%d,\"file\":", a->workers, a->asked);
	json_string(stdout, a->path);
	printf(",\"lines\":[");
	for (int i = 0; i < a->nlines; i++) {
		printf("%s{\"kind\":\"%s\",\"text\":", i ? "," : "", a->lines[i].kind);
		json_string(stdout, a->lines[i].text);
		printf("}");
	}
	printf("],\"left_out\":%d},\"advice_why\":null", a->more);
}

void diag_print_json(const struct diagnosis *g, const char *cannot, const struct advice *adv)
{
	printf("{\"kind\":\"diagnosis\",\"port\":%d,\"listener\":\"%s\",\"listeners\":%d,\"addresses\":%d,\"wait\":",
	       g->port, g->listener, g->listeners, g->addresses);
	json_string(stdout, g->wait);
	printf(",\"triggered\":");
	json_string(stdout, g->triggered);
	printf(",\"wait_detail\":");
	json_string(stdout, g->wait_detail);
	printf(",\"selector\":");
	json_string(stdout, g->selector);
	printf(",\"selector_prog_id\":");
	if (g->sel.prog_id)
		printf("%u", g->sel.prog_id);
	else
		printf("null");
	printf(",\"selector_how\":");
	json_string(stdout, g->sel.how);
	printf(",\"handoff\":%s", g->handoff < 0 ? "null" : tf(g->handoff));
	printf(",\"churn\":");
	if (g->traced) {
		printf("{\"add\":%llu,\"del\":%llu,\"threads\":%d,\"every_ms\":%d,\"spacing\":%d,\"epolls\":[",
		       g->churn_add, g->churn_del, g->churn_threads, g->churn_every_ms, g->churn_spacing);
		for (int i = 0; i < g->nepolls; i++)
			printf("%s{\"pid\":%d,\"fd\":%d,\"reads\":%u,\"shortest_read_us\":%.0f}", i ? "," : "",
			       g->epolls[i].pid, g->epolls[i].fd, g->epolls[i].reads, g->epolls[i].shortest_us);
		printf("]}");
	} else {
		printf("null");
	}
	printf(",\"closest_variant\":");
	json_string(stdout, g->closest_variant);
	printf(",\"workers\":[");
	for (int i = 0; i < g->nrows; i++) {
		const struct diag_row *r = &g->rows[i];
		printf("%s{\"pid\":%d,\"tid\":", i ? "," : "", r->pid);
		if (r->tid)
			printf("%d", r->tid);
		else
			printf("null,\"threads\":%d", r->threads);
		printf(",\"comm\":");
		json_string(stdout, r->comm);
		printf(",\"wait\":");
		json_string(stdout, diagnosis_wait_word(r));
		json_count("accepted", r->accepted, g->traced);
		json_count("served", r->served, g->traced);
		json_count("handed_off", r->handed_off, g->traced);
		json_count("received", r->received, g->traced);
		json_count("held_max", (unsigned long long)(r->held_max > 0 ? r->held_max : 0), g->traced);
		if (g->traced)
			printf(",\"held_mean\":%.2f", held_mean(g, r));
		else
			printf(",\"held_mean\":null");
		json_count("wakeups", r->wakeups, g->traced);
		json_count("wasted", r->wasted, g->traced);
		json_count("ctl_add", r->ctl_add, g->traced);
		json_count("ctl_del", r->ctl_del, g->traced);
		printf(",\"in_split\":%s}", tf(diagnosis_in_split(g, r)));
	}
	printf("],\"split\":");
	json_string(stdout, g->split_of ? g->split : NULL);
	printf(",\"split_of\":");
	json_string(stdout, g->split_of);
	printf(",\"within_2to1\":%s", g->within_2to1 < 0 ? "null" : tf(g->within_2to1));
	printf(",\"fair_chance\":");
	json_double(g->fair_chance);
	printf(",\"fair_chance_outside_2to1\":");
	json_double(g->fair_outside);
	printf(",\"fair_chance_why\":");
	json_string(stdout, g->fair_why[0] ? g->fair_why : NULL);
	if (g->nrounds) {
		printf(",\"rounds\":[");
		for (int k = 0; k < g->nrounds; k++) {
			const struct diag_round *r = &g->round[k];

			printf("%s{\"round\":%d,\"split\":", k ? "," : "", k + 1);
			json_string(stdout, r->split_of ? r->split : NULL);
			printf(",\"split_of\":");
			json_string(stdout, r->split_of);
			printf(",\"connections\":%ld,\"within_2to1\":%s,\"fair_chance\":", r->connections,
			       r->within_2to1 < 0 ? "null" : tf(r->within_2to1));
			json_double(r->fair_chance);
			printf("}");
		}
		printf("]");
	}
	printf(",\"totals\":");
	if (g->traced)
		printf("{\"established\":%llu,\"accepted\":%llu,\"served\":%llu,\"handoffs\":%llu,\"closed\":%llu,"
		       "\"unaccepted_reads\":%llu,\"spilled\":%llu}",
		       g->established, g->accepted, g->served, g->handoffs, g->closed, g->unaccepted_reads,
		       g->spilled);
	else
		printf("null");
	printf(",\"traced\":%s,\"cannot\":", tf(g->traced));
	json_string(stdout, cannot);
	printf(",\"mode\":");
	json_string(stdout, g->mode);
	printf(",\"load\":");
	json_string(stdout, g->load);
	printf(",\"duration_s\":%.3f,\"paused_s\":%.3f,\"partial\":%s,\"partial_why\":", g->duration_s, g->paused_s,
	       tf(g->partial));
	json_string(stdout, g->partial ? g->partial_why : NULL);
	printf(",\"verdict\":");
	json_string(stdout, g->verdict);
	print_advice_json(adv);
	printf("}\n");
}

/* text wrapped at width columns, the first line after first (printed
 * before it), the others indented by indent spaces. */
static void print_hanging(const char *first, int indent, const char *text, int width)
{
	const char *p = text;
	int lead = (int)strlen(first);

	printf("%s", first);
	while (*p) {
		int len = (int)strlen(p), cut = len, room = width - lead;

		if (len > room) {
			cut = room;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0) /* a word longer than the line (a path): whole */
				cut = (int)strcspn(p, " ");
		}
		printf("%.*s\n", cut, p);
		p += cut;
		while (*p == ' ')
			p++;
		if (*p)
			printf("%*s", indent, "");
		lead = indent;
	}
}

/* The verdict, wrapped at width columns. */
static void print_wrapped(const char *text, int width)
{
	print_hanging("", 0, text, width);
}

static void text_count(unsigned long long v, int width, int traced)
{
	if (traced)
		printf(" %*llu", width, v);
	else
		printf(" %*s", width, "-");
}

static void print_advice_text(const struct advice *a)
{
	char head[5000], count[96];

	printf("\n");
	if (!a->found) {
		snprintf(head, sizeof(head), "What to change: no advice (%s).", a->why);
		print_wrapped(head, 78);
		return;
	}
	advice_count_text(a, count, sizeof(count));
	snprintf(head, sizeof(head), "What to change (acceptlab's run %s, %s; %s):", a->run, count, a->path);
	print_wrapped(head, 78);
	for (int i = 0; i < a->nlines; i++)
		print_hanging("- ", 2, a->lines[i].text, 78);
	if (a->more)
		printf("(%d more lines in the file)\n", a->more);
}

void diag_print_text(const struct diagnosis *g, const struct detection *d, const char *cannot,
		     const struct advice *adv)
{
	printf("port %d: %d listening socket%s (%s", g->port, g->listeners, g->listeners == 1 ? "" : "s", g->listener);
	if (g->selector)
		printf(", selector %s", g->selector);
	printf("), wait %s", g->wait ? g->wait : "unseen");
	if (g->triggered)
		printf(" (%s-triggered)", g->triggered);
	printf(", handoff %s, closest variant %s\n", g->handoff < 0 ? "unknown" : g->handoff ? "yes" : "no",
	       g->closest_variant ? g->closest_variant : "none");
	printf("holders:");
	for (int i = 0; i < d->nh && i < 16; i++)
		printf(" %d(%s)", d->h[i].pid, d->h[i].comm);
	printf("%s\n\n", d->nh > 16 ? " ..." : "");
	printf("%-8s %-8s %-15s %9s %7s %5s %8s %7s  %s\n", "pid", "tid", "comm", "accepted", "served", "held",
	       "wakeups", "wasted", "wait");
	for (int i = 0; i < g->nrows; i++) {
		const struct diag_row *r = &g->rows[i];
		const char *w = diagnosis_wait_word(r);

		char tid[16];

		if (r->tid)
			snprintf(tid, sizeof(tid), "%d", r->tid);
		else
			snprintf(tid, sizeof(tid), "%d thr", r->threads);
		printf("%-8d %-8s %-15s", r->pid, tid, r->comm[0] ? r->comm : "-");
		text_count(r->accepted, 9, g->traced);
		text_count(r->served, 7, g->traced);
		text_count((unsigned long long)(r->held_max > 0 ? r->held_max : 0), 5, g->traced);
		text_count(r->wakeups, 8, g->traced);
		text_count(r->wasted, 7, g->traced);
		printf("  %s%s\n", w ? w : r->tid ? "-" : "pool", diagnosis_in_split(g, r) ? "" : " (acceptor only)");
	}
	if (!g->nrows)
		printf("(no worker thread seen waiting on the port%s)\n", g->traced ? " or handling its connections" : "");
	if (g->paused_s > 0)
		printf("(the watch was paused for %.1f of its %.1f s: nothing was counted then)\n", g->paused_s,
		       g->duration_s);
	if (g->nrounds) {
		int within = 0;

		printf("\nrounds (connections %s):", g->split_of ? g->split_of : "counted");
		for (int k = 0; k < g->nrounds; k++) {
			printf(" %s", g->round[k].split_of ? g->round[k].split : "-");
			within += g->round[k].within_2to1 == 1;
		}
		printf("; %d of %d within 2:1\n", within, g->nrounds);
	}
	printf("\n");
	print_wrapped(g->verdict, 78);
	print_advice_text(adv);
	(void)cannot; /* said once, on stderr */
}
