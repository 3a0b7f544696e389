/* reuseport_common.h: what the SO_REUSEPORT variants share. */
#ifndef ACCEPTLAB_REUSEPORT_COMMON_H
#define ACCEPTLAB_REUSEPORT_COMMON_H

#include "../server.h"

/* --reuseport-migrate, read by both SO_REUSEPORT variants. */
extern const struct knob_set reuseport_migrate_knobs;

/* 1 if --reuseport-migrate was given. */
int reuseport_migrate_wanted(void);

/* With --reuseport-migrate, sets net.ipv4.tcp_migrate_req=1 for the server's
 * network namespace, so the kernel moves connections queued at a closing
 * listener to another in its group. Refuses a namespace with interfaces
 * besides lo (the machine's own: not ours to change): run the server under
 * `unshare -n`.
 * Without the knob does nothing. 0, or -1 with the reason in err. */
int reuseport_setup_migrate(char *err, size_t errlen);

#endif
