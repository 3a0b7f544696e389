/* load.h: what a worker's load is, kept one way for every balancing variant
 * (fdpass, reuseport-bpf, handoff).
 *
 * A worker's load is the connections it holds whose peer has not closed
 * them, plus those in flight to it (handed over and not yet admitted, or
 * steered to it at SYN time and not yet established). Each slot (server.h)
 * has one record (ebpf/worker_load.h: held, inflight, the SYN window) in
 * memory every process of the server maps.
 *
 * Two accountings fill it:
 *  - kernel (root, BPF): a connection counts from the moment its worker
 *    admits it (or, for a per-worker listener, the moment it is established)
 *    until it leaves ESTABLISHED, seen by a tracepoint in softirq: the
 *    client's FIN or RST uncounts it at once, not when the worker gets round
 *    to reading it (ebpf/worker_load.bpf.c says how).
 *  - user (no BPF: not root, or ACCEPTLAB_ACCOUNTING=user): a connection
 *    counts from its admission until its worker closes it.
 * Both count in-flight hand-offs the same way: raised by the sender before
 * it sends, lowered by the receiver once it has admitted.
 *
 * Like net.c: errors are returned with a one-line reason, never printed. */
#ifndef ACCEPTLAB_LOAD_H
#define ACCEPTLAB_LOAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct server;
struct load_account;

#define LOAD_STEER 1u       /* reuseport-bpf: load the sk_reuseport program, count SYNs */
#define LOAD_NEED_KERNEL 2u /* no user fallback: fail if BPF cannot be had */
#define LOAD_MIGRATE 4u     /* with LOAD_STEER: the program also places migrating requests */

/* The environment variable that picks the accounting: "kernel" (required,
 * or fail), "user", or unset (kernel where BPF can be had, else user). */
#define LOAD_ACCOUNTING_ENV "ACCEPTLAB_ACCOUNTING"

/* In the supervisor (or threads mode's main thread) before any worker
 * starts, after the port is bound (srv->bound_port): sets the accounting
 * up for srv's slots. NULL with the reason in err. */
struct load_account *load_open(const struct server *srv, unsigned flags, char *err, size_t errlen);

/* "kernel" or "user". */
const char *load_accounting(const struct load_account *la);

/* Why user accounting when kernel accounting was not asked against but
 * could not be had (not root, say); NULL otherwise. */
const char *load_note(const struct load_account *la);

/* --spawn-workers: the descriptors an exec'd worker needs (kernel: the
 * maps and the program; user: the page), and rebuilding from them. */
int load_spawn_fds(const struct load_account *la, int *fds, int max);
struct load_account *load_import(const struct server *srv, unsigned flags, const int *fds, int n, char *err,
				 size_t errlen);

/* A new worker takes slot (worker_start), or the supervisor has reaped the
 * one that held it: what it held died with it, so held and the SYN window
 * start again at 0 under a new generation (tags of the old one no longer
 * count); inflight is left alone (a channel's queued hand-offs outlive a
 * respawn, and whoever takes them off lowers it). */
void load_slot_restart(struct load_account *la, int slot);

/* The worker process pid takes slot (its start): the kernel counts what is
 * open at its death against the slot from now (struct load_slot's owner). */
void load_slot_owned(struct load_account *la, int slot, pid_t pid);

/* The supervisor has reaped slot's worker pid (of index): writes one line
 * {"event":"slot_restarted","index":I,"slot":S,"pid":P,"held_at_death":N,
 * "inflight":M} on stdout, N what it held open when it died (kernel: the
 * connections its exit closed while ESTABLISHED, tagged or not yet; user:
 * those it had admitted and not closed), M what was in flight to it, then
 * restarts the slot (load_slot_restart). */
void load_slot_reaped(struct load_account *la, int slot, int index, pid_t pid);

/* A connection is decided for slot (delta 1), or that decision is taken
 * back (delta -1, the send failed). */
void load_credit(struct load_account *la, int slot, int delta);

/* The worker in slot admits connected socket fd, which was credited to it:
 * it now counts as held until it leaves ESTABLISHED (kernel) or until the
 * worker closes it (user), and its credit is lowered. */
void load_admit(struct load_account *la, int slot, int fd);

/* User accounting: a connection the worker in slot admitted has closed
 * (conn_closed). Kernel accounting: nothing (the kernel saw it leave). */
void load_closed(struct load_account *la, int slot);

/* The slot's load: held + inflight + SYNs in the window. */
int64_t load_of(const struct load_account *la, int slot);

/* The slot's inflight alone (a leaver waits for it to reach 0). */
int64_t load_inflight(const struct load_account *la, int slot);

/* reuseport-bpf: the worker in slot joins the steering with its listener:
 * attaches the program to the group, puts the listener in the sockarray,
 * tags it (each connection it accepts counts for slot once established)
 * and marks the slot live. 0, or -1 + err. */
int load_join(struct load_account *la, int slot, int listen_fd, char *err, size_t errlen);

/* reuseport-bpf: the slot is no longer a candidate (its worker leaves). */
void load_leave(struct load_account *la, int slot);

/* ACCEPTLAB_TEST_PRELOAD: starts slot's held at n. */
void load_preload(struct load_account *la, int slot, int64_t n);

/* Writes one slot's own members for GET /variant (each followed by a
 * comma); returns the length written (< len). */
typedef int (*load_slot_members)(void *ctx, int slot, char *buf, size_t len);

/* The accounting and every slot's record as JSON members, for GET /variant:
 * "accounting":"kernel","slots":[{"slot":S,"index":I,<extra's members>
 * "load":N,"held":N,"inflight":N (with LOAD_STEER also "syn":N,"live":B)},
 * ...] for slots 0..nslots-1 (index = slot % workers); extra may be NULL.
 * Returns the length written (< len). */
int load_describe(const struct load_account *la, int nslots, int workers, load_slot_members extra, void *ctx,
		  char *buf, size_t len);

#endif
