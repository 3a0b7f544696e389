/* load.h: what a worker's load is, kept one way for every balancing variant
 * (fdpass, reuseport-bpf, handoff).
 *
 * A worker's load is the connections it holds whose peer has not closed
 * them, plus those in flight to it (handed over and not yet taken by it, or
 * steered to it at SYN time and not yet established). Each slot (server.h)
 * has one record (ebpf/worker_load.h: held, credited, retired, the SYN
 * window) in memory every process of the server maps.
 *
 * Two accountings fill it:
 *  - kernel (root, BPF): a connection counts from the moment its worker
 *    decides to keep it (or, for a per-worker listener, the moment it is
 *    established) until it leaves ESTABLISHED, seen by a tracepoint in
 *    softirq: the client's FIN or RST uncounts it at once, not when the
 *    worker gets round to reading it (ebpf/worker_load.bpf.c says how).
 *  - user (no BPF: not root, or ACCEPTLAB_ACCOUNTING=user): a connection
 *    counts from its admission until its worker closes it.
 * Both count in-flight hand-offs the same way: inflight = credited (raised
 * by the sender before it sends) - retired (counted by the receiver as it
 * takes one). The receiver never lowers the senders' word: its retire is a
 * single store of its own word (the count and the ticket it retired), so a
 * kill cannot leave a retire half done.
 *
 * Kills. A worker can be SIGKILLed at any instruction (most often as a
 * syscall returns). The supervisor's reap restarts held (and the SYN
 * window) under a new generation, so a kill anywhere leaves held right once
 * the reap is done: what the dead worker raised, tagged or not, counts no
 * more, and its tagged connections' later exits count nowhere. Inflight
 * outlives the reap (hand-offs queued in the dead worker's channel are its
 * replacement's), so it must be right at any kill point by itself:
 *  - the keep path (the acceptor keeps what it accepted) never touches it;
 *  - a receiver's retire is one store, made while the hand-off is still
 *    queued (fdpass peeks, retires, then dequeues): killed before the
 *    store, the replacement finds the hand-off queued and retires it;
 *    after, it finds it queued with its ticket already retired
 *    (load_retired) and does not; after the dequeue, it is gone with the
 *    worker and retired;
 *  - a sender's credit (load_give): with kernel accounting the sender's
 *    giving record names the connection, and if the sender dies with it
 *    unsent (credited, then killed before its sendmsg returned, or as a
 *    failed one returned) the kernel takes the credit back as the dying
 *    process closes it; a sent one is held by its message, so that close
 *    is not its last. Left: an interrupt-delivered kill between the credit
 *    and the store of the record, or between clearing the record and the
 *    take-back after a failed send (two adjacent atomic writes each),
 *    leaves the target one high.
 * User accounting has no kernel to do that: a sender killed between its
 * credit and the end of its send (including a failed sendmsg's return)
 * leaves the target's inflight one high for good; its held is as exact as
 * the kernel's under kills, its uncounting of closes is not (a connection
 * counts until the worker closes it, not until the peer does).
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
#define LOAD_GIVING 8u      /* hand-offs between processes (fdpass): the kernel takes a dead sender's credit back */

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

/* The supervisor has reaped the worker that held slot (or a new worker
 * takes it): what it held died with it, so held and the SYN window start
 * again at 0 under a new generation (tags of the old one no longer count)
 * and its giving record is dropped; credited and retired are left alone (a
 * channel's queued hand-offs outlive a respawn, and whoever takes them off
 * retires them). */
void load_slot_restart(struct load_account *la, int slot);

/* The worker process pid takes slot (its start): the kernel counts what is
 * open at its death against the slot from now (struct load_slot's owner). */
void load_slot_owned(struct load_account *la, int slot, pid_t pid);

/* The supervisor has reaped slot's worker pid (of index): writes one line
 * {"event":"slot_restarted","index":I,"slot":S,"pid":P,"held_at_death":N,
 * "inflight":M} on stdout, N what it held open when it died (kernel: the
 * connections its exit closed while ESTABLISHED, tagged or not yet, and the
 * hand-offs it had taken that their senders closed after its death, for
 * which it waits while a sender's giving record names the slot; user:
 * those it had admitted and not closed), M what was in flight to it, then
 * restarts the slot (load_slot_restart). */
void load_slot_reaped(struct load_account *la, int slot, int index, pid_t pid);

/* A hand-off is decided for slot (delta 1), or that decision is taken back
 * (delta -1). handoff's threads use it as is; fdpass's processes use
 * load_give, which can survive the sender's death. */
void load_credit(struct load_account *la, int slot, int delta);

/* The worker in slot from hands the connection from peer (network byte
 * order, as accept and struct sock have them) to slot to: credits to, then
 * (kernel, LOAD_GIVING) records the giving in from's record, so the kernel
 * takes the credit back if from dies holding that connection unsent. Then
 * exactly one of: load_given once the send has succeeded and the sender has
 * closed its own copy (the reap of a dead target waits for that close:
 * load_slot_reaped), or load_give_back. */
void load_give(struct load_account *la, int from, int to, uint32_t peer_addr, uint16_t peer_port);
void load_given(struct load_account *la, int from);
void load_give_back(struct load_account *la, int from, int to);

/* The worker in slot keeps a connection: held is raised at once (siblings
 * see the decision before any syscall), then load_tag. */
void load_hold(struct load_account *la, int slot);

/* A hold taken back before the connection was tagged or read (the
 * decision is made again): held lowered by one. */
void load_unhold(struct load_account *la, int slot);

/* Kernel: tags connected socket fd as slot's, so it counts until it leaves
 * ESTABLISHED; if it already has (the kernel's marker), the raise of
 * load_hold is undone. In worker processes (fdpass) nothing: the kernel
 * tags it at the worker's first read, and undoes the raise there if it
 * finds the marker (ebpf/worker_load.bpf.c, tag_on_read), which saves a
 * syscall per connection. User: nothing (it counts until load_closed). */
void load_tag(struct load_account *la, int slot, int fd);

/* The worker in slot takes one hand-off credited to it, whose sender gave it
 * ticket (never 0 from fdpass; handoff's are all 0): one store of the
 * slot's retired word. Only the slot's current worker calls it, or the
 * supervisor once no worker will. */
void load_retire(struct load_account *la, int slot, uint64_t ticket);

/* 1 if ticket is the last one slot's worker retired (a predecessor that died
 * between its retire and its dequeue). */
int load_retired(const struct load_account *la, int slot, uint64_t ticket);

/* handoff: the thread in slot admits fd, which was credited to it:
 * load_hold, load_retire(0), load_tag. */
void load_admit(struct load_account *la, int slot, int fd);

/* User accounting: a connection the worker in slot admitted has closed
 * (conn_closed). Kernel accounting: nothing (the kernel saw it leave). */
void load_closed(struct load_account *la, int slot);

/* The worker in slot closes a connection it held and never read (its
 * admission failed): user accounting, as load_closed; kernel accounting
 * whose tags come from first reads has no tag to uncount it by, so this
 * does; otherwise nothing (the kernel saw it leave). */
void load_closed_unread(struct load_account *la, int slot);

/* The slot's load: held + inflight + SYNs in the window. */
int64_t load_of(const struct load_account *la, int slot);

/* The slot's inflight alone, credited - retired (a leaver waits for it to
 * reach 0). Its first read is of credited: a leaver that stored LEFT and a
 * sender that credited each write before they read. */
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
