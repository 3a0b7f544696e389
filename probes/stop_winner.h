/* stop_winner.h: --stop-winner. SIGSTOPs the worker that answered most, so
 * the probe can run its rounds again without it, judges that rerun (the
 * others must answer every connection), and SIGCONTs the worker. The rerun
 * itself is the caller's. Reports in a buffer; never prints or exits. */
#ifndef ACCEPTLAB_STOP_WINNER_H
#define ACCEPTLAB_STOP_WINNER_H

#include <stddef.h>
#include <sys/types.h>

#include "tally.h"

#define STOP_WINNER_MSG_LEN (MAX_WORKERS * 96 + 128) /* room for a verdict line per worker */

/* SIGSTOPs the worker of total that answered most and waits until /proc
 * shows it stopped. Its pid, or -1 with msg saying why (nothing left stopped). */
pid_t stop_winner_stop(const struct tally *total, char *msg, size_t len);

/* The worker stop_winner_stop stopped, 0 when none is stopped. */
pid_t stop_winner_pid(void);

/* 0 if in again (the rerun) the stopped worker answered nothing and every
 * connection was answered; else 1, with msg a line per failure, each ending "\n". */
int stop_winner_verdict(const struct tally *again, char *msg, size_t len);

/* SIGCONTs the stopped worker, if any. Async-signal-safe (for a fatal signal's handler). */
void stop_winner_continue(void);

#endif
