/* tally.h: the probe's counts per worker (or, without attribution, its
 * answers by status and connections held), the types probe.c counts into
 * and stop_winner.c judges a rerun by. */
#ifndef ACCEPTLAB_TALLY_H
#define ACCEPTLAB_TALLY_H

#define MAX_WORKERS 256
#define ID_LEN 64

/* Why a connection went unanswered; probe.c's err_names and err_hints
 * follow this order. */
enum err_kind { E_REFUSED, E_CONNECT_TIMEOUT, E_RESET, E_EOF, E_TIMEOUT, E_BAD_RESPONSE, E_SEND, E_OTHER, E_KINDS };

/* A worker the probe knows of: from the ready line, or because it answered. */
struct wstat {
	char id[ID_LEN];
	int pid; /* 0 if unknown */
	long conns, reqs;
};

/* Statuses counted per answer with --worker-from none: status s in statuses[s - STATUS_MIN]. */
#define STATUS_MIN 100
#define STATUS_SLOTS 900

struct tally {
	struct wstat w[MAX_WORKERS];
	int n;
	long errors[E_KINDS];
	long answered, unanswered, switched;
	/* Without attribution (--worker-from none, --tcp): answers to every
	 * request (keepalive asks several per connection) by status; with --tcp,
	 * connections whose connect completed (opened) and those still open when
	 * the hold ended (held; unanswered is then the connections that failed). */
	long replies, opened, held;
	long statuses[STATUS_SLOTS];
};

#endif
