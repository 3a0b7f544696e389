/* diagnosis.h: bin/acceptlab-diagnose's result and how it is reasoned: the
 * workers (from the detection, and from the trace when it ran), the
 * mechanism named in the fields the output carries (listener, wait,
 * selector, handoff, closest_variant), the split and the verdict's words.
 * Pure functions of what detect.h, selector.h and the loader gathered; no
 * I/O (diagnose_print.h prints). */
#ifndef ACCEPTLAB_DIAGNOSIS_H
#define ACCEPTLAB_DIAGNOSIS_H

#include "detect.h"
#include "selector.h"

#define DIAG_MAX_ROWS 4096
#define DIAG_MAX_ROUNDS 20 /* active --rounds: the probe's rounds split one by one */

/* One worker thread. */
struct diag_row {
	int pid;
	int tid;
	char comm[16];
	enum detect_wait wait;          /* what the detection saw it wait in */
	unsigned events;                /* its epoll's registration of the listener (WAIT_EPOLL) */
	/* From the trace (zero when it did not run): */
	unsigned long long accepted;    /* accepts of the port's connections */
	unsigned long long served;      /* connections whose bytes it read first */
	unsigned long long handed_off;  /* of its accepts, read first by another thread */
	unsigned long long received;    /* of its first reads, connections another thread accepted */
	unsigned long long received_cross; /* of those, accepted in another process */
	int threads;                    /* a process's pool collapsed into this row (tid 0): how many threads */
	unsigned long long wakeups;     /* woken while waiting (epoll_wait, accept), the tracer's count */
	unsigned long long wasted;      /* woken, lost the accept, waited again (the tracer's) */
	unsigned long long ctl_add;     /* a listener seen to appear in its epoll (the loader's /proc reads) */
	unsigned long long ctl_del;     /* one seen to leave it */
	unsigned ctl_events;            /* the events masks of those it was seen to gain, OR'ed */
	long long held_max;             /* the most connections it held at once (the kernel's peak; a
					 * pool's: the most seen in a sample) */
	double held_sum;                /* summed over samples, for the mean */
};

/* One of the holders' epolls, as the loader reads it again while it
 * watches (registration churn). */
struct diag_epoll {
	int pid, fd;
	signed char present;            /* a listener in it at the last read: 1, 0, or -1 not read yet */
	unsigned reads;
	double shortest_us;             /* its shortest read */
	double due;                     /* when it is next read (the loader's clock, seconds) */
};

struct diagnosis {
	int port;
	int traced;                     /* the trace ran: the counts mean something */
	const char *mode;               /* "passive" or "active" */
	const char *load;               /* active: the probe's shape */
	double duration_s;              /* how long it watched */
	double paused_s;                /* of that, paused (SIGUSR1 to SIGUSR2): nothing traced */
	int samples;                    /* held samples taken */
	int partial;                    /* the watch ended early */
	char partial_why[160];
	/* The trace's totals. */
	unsigned long long established, accepted, served, handoffs, closed, unaccepted_reads, spilled;
	/* The mechanism. */
	const char *listener;           /* "shared" | "reuseport" */
	int listeners;
	int holders;                    /* processes holding them (readable ones) */
	int addresses;                  /* distinct local addresses among them */
	int groups;                     /* reuseport groups (the iterator's), 0 unknown */
	const char *wait;               /* "epoll" | "epoll-exclusive" | "accept" | "poll" | "mixed" | NULL */
	const char *triggered;          /* "edge" | "level" | "mixed" | NULL */
	char wait_detail[512];
	const char *selector;           /* "bpf" | "hash" | NULL (shared) */
	struct selector_found sel;
	int handoff;                    /* 1, 0, or -1 not known (not traced) */
	unsigned long long churn_add, churn_del;
	int churn_threads;
	int churn_every_ms;             /* how often the loader read the epolls' registrations again, */
	int churn_spacing;              /* or this many times as long as its last read took, if longer */
	struct diag_epoll epolls[DETECT_MAX_EPOLLS];
	int nepolls;
	int shared_epoll;               /* threads of one process wait on one epoll holding the listener */
	int mutex_hint;                 /* the listener is in some waiters' epolls, not others' */
	int handoff_balancing;          /* a hand-off to another process, or to a peer waiting on the port */
	int handoff_pool;               /* a hand-off to threads of the acceptor's process that do not wait on the port */
	/* The most each process's pool held at once (the loader's samples). */
	struct { int pid; long long held_max; } pool_held[DIAG_MAX_ROWS];
	int npool_held;
	const char *closest_variant;
	/* The split. */
	struct diag_row rows[DIAG_MAX_ROWS];
	int nrows;
	const char *split_of;           /* "served" | "accepted" | NULL */
	char split[256];
	int within_2to1;                /* 1, 0, or -1 (no split) */
	/* The split against a fair one (common/fair_split.h): n connections
	 * over k workers, each to any worker with chance 1/k. NAN when not
	 * computed (no split, one worker, or beyond fair_split's sizes:
	 * fair_why says which). */
	long fair_n, fair_max;          /* the split's total and its largest count */
	int fair_k;                     /* the workers in the split */
	double fair_chance;             /* P(a fair split's largest >= fair_max) */
	double fair_outside;            /* P(a fair split is outside 2:1) */
	char fair_why[96];              /* why fair_chance is NAN, or empty */
	/* Active --rounds R: each probe round's own split, from the counts
	 * marked as the probe reported the round (diagnosis_rounds). */
	int nrounds;
	struct diag_round {
		char split[256];
		const char *split_of;
		int within_2to1;
		long connections;       /* counted in the split */
		double fair_chance;
	} round[DIAG_MAX_ROUNDS];
	char verdict[2048];
};

/* The counts of every thread at one moment: a probe round's end. */
struct diag_mark {
	int n;
	struct { int tid; unsigned long long accepted, served; } at[DIAG_MAX_ROWS];
};

/* Notes every row's counts now into m. */
void diagnosis_mark(const struct diagnosis *g, struct diag_mark *m);

/* Each round's split from the marks taken at the end of rounds 1..n (the
 * counts were 0 when the load began): the rows' counts are the differences
 * between a round's mark and the one before; pools and the split as for the
 * whole watch. Call before diagnosis_classify (rows still per thread). */
void diagnosis_rounds(struct diagnosis *g, const struct diag_mark *marks, int n);

/* The row of thread tid (of process pid), added if new; NULL when full. */
struct diag_row *diagnosis_row(struct diagnosis *g, int pid, int tid);

/* The row of tid, or NULL. */
struct diag_row *diagnosis_find(struct diagnosis *g, int tid);

/* Sets the row's wait from the detection's look at its thread, if any. */
void diagnosis_row_wait(struct diag_row *r, const struct detection *d);

/* Rows for the detection's workers: threads waiting on a listener (epoll
 * or accept), and threads of a holder process waiting on an epoll without
 * it when no thread of that process has it (an accept mutex's idle ones). */
void diagnosis_rows_from_detection(struct diagnosis *g, const struct detection *d);

/* A row that only serves connections its own process's other threads
 * accepted, and does not wait on the port itself: a pool thread (or a
 * thread per connection). */
int diagnosis_is_pool(const struct diag_row *r);

/* Notes the held count of pid's pool threads in one sample. */
void diagnosis_pool_sample(struct diagnosis *g, int pid, long long held);

/* Below this chance a fair split as skewed as the one seen is called
 * beyond chance in the verdict. */
#define DIAG_BEYOND_CHANCE 0.01

/* Everything else from the rows and the detection: the mechanism's
 * fields, closest_variant, the split (with its fair chances) and the
 * verdict. */
void diagnosis_classify(struct diagnosis *g, const struct detection *d);

/* A row counts in the split unless it only accepts (accepted some, served
 * none, handed some on: an acceptor that hands every connection on). A
 * worker whose few accepts were never read (a client that connected and
 * closed: a health check) and that handed none on still counts, with
 * served 0. */
int diagnosis_in_split(const struct diagnosis *g, const struct diag_row *r);

/* The workers in the split (diagnosis_in_split's rows; every row when
 * there is no split): the worker count the advice is looked up by. */
int diagnosis_split_workers(const struct diagnosis *g);

/* A chance as a percentage for a sentence: "43.1 %", "0.0312 %",
 * "4.66e-08 %", "below 1e-306 %" for one that underflowed to 0. */
void diagnosis_chance_text(double p, char *out, size_t len);

/* The row's wait as a word: "epoll", "epoll-exclusive", "accept",
 * "epoll-no-listener", "poll", or NULL. */
const char *diagnosis_wait_word(const struct diag_row *r);

#endif
