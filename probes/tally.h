/* tally.h: the probe's counts per worker, the types probe.c counts into and
 * stop_winner.c judges a rerun by. */
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

struct tally {
	struct wstat w[MAX_WORKERS];
	int n;
	long errors[E_KINDS];
	long answered, unanswered, switched;
};

#endif
