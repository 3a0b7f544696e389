/* fdpass: accept sharing. Every worker watches the one shared listener,
 * but a connection goes to the least-loaded worker, not to whoever runs
 * first. By default the kernel wakes one worker per connection (the
 * listener level triggered with EPOLLEXCLUSIVE, below): it accepts one
 * connection per event and keeps it, or, when the pick names a sibling,
 * passes it over SCM_RIGHTS, so the kernel decides who is woken, not who
 * serves. ACCEPTLAB_ACCEPT_EXCLUSIVE=0 is the herd: every worker woken
 * (EPOLLET, accept until EAGAIN), and a woken worker that is not the least
 * loaded leaves the accept to the one that is (deferral, below), or hands
 * the connection over when it cannot.
 *
 * The parts, each with the reason it exists:
 *  - Slots: everything per worker below exists once per slot (server.h:
 *    index i uses slot i or i + workers, so a reload's new worker and the
 *    old one it replaces never share a line or a channel).
 *  - Channels: before the fork, one non-blocking SOCK_DGRAM socketpair per
 *    slot (64 KB buffers); a worker reads its slot's, every worker holds
 *    every send end. The supervisor keeps every read end: a respawn inherits
 *    its index's channel, and on giving up it can close what was queued there.
 *  - Loads (load.h, one accounting for every balancing variant): a slot's
 *    load is the connections its worker holds whose peer has not closed
 *    them, plus those handed to it and not yet retired by it. With BPF the kernel
 *    uncounts a connection the moment it leaves ESTABLISHED; without, the
 *    worker does when it closes it. Every decision is counted at once (the
 *    target's inflight is raised before the send), so siblings deciding at
 *    the same moment see each other's choices, not a view published at the
 *    end of a pass.
 *  - The shared page (a memfd mapped MAP_SHARED before the fork, so it
 *    survives --spawn-workers' exec): word 0 an event id (bumped on every
 *    hand-off), word 1 a rotation counter, word 2 the last hand-off's
 *    ticket, word 3 the test stop's latch, and one cache line per slot:
 *    state, tid, and the worker's handler clock (server.h).
 *    state: NOT_STARTED (0, what a fresh page holds before anything writes),
 *    SERVING (-2, from just before it reports ready) or LEFT (-1).
 *  - The pick: least load, ties to the acceptor, siblings scanned from a
 *    rotating start (over indexes) so equal siblings take turns. It is made
 *    before each accept; with the herd, when it names a sibling, the
 *    acceptor usually defers (share_defer): it leaves the connection
 *    queued for that sibling, woken by the same arrival, and no hand-off is
 *    needed. A sibling that has left or not started is skipped, and so is one
 *    in a slow view (slow_view below): inside one request handler for over 2
 *    ms and asleep there (blocking inline: its scheduler state, read from
 *    /proc, is S or D), or for over 20 ms whatever its state, or asleep in
 *    one right after a handler that took over 2 ms, or just out of a slow
 *    one. A sibling that is merely preempted, or busy with a long pass of
 *    short requests, is not skipped: it serves what it is given as soon as it
 *    runs. An acceptor just out of a slow view keeps nothing a sibling can
 *    take. A decision is counted, then checked against the loads as they
 *    are by then, and made again if a sibling decided at the same moment
 *    (share_count).
 *  - The hand-off: raise the target's inflight BEFORE sending (load_give:
 *    the credit, then the giving record naming the connection), read its
 *    state again and keep the connection if it has left; on any send failure
 *    take the credit back and keep it. Nothing is ever dropped. The
 *    datagram carries the peer address and a ticket, unique per hand-off.
 *  - Keeping: the acceptor that keeps a connection raises its held, then
 *    tags it (load_hold, load_tag); no inflight is involved. With kernel
 *    accounting the tag is the kernel's, made at the worker's first read
 *    of the connection, which follows its admission at once (load.h).
 *  - Receiving: the receiver peeks the datagram at the head of its channel
 *    (the connection is still queued), raises its held, retires the credit
 *    (load_retire: one store of its slot's retired word, naming the
 *    ticket), and only then dequeues it, tags it, and hands it to the
 *    accept path's tail (worker_admit). One datagram per readiness of the
 *    channel (registered level triggered: epoll reports it again while
 *    more are queued), so a lone hand-off costs no peek that finds the
 *    channel empty.
 *  - Kills. The invariant, once the reap is done: a slot's inflight is the
 *    hand-offs queued in its channel that no one has retired, plus those a
 *    live sender has credited and not yet sent or taken back; its held is
 *    what a live worker of it holds. held restarts at the reap, so only
 *    inflight needs care:
 *      - keeper killed anywhere: held only, restarted.
 *      - receiver killed after its peek, before its retire: the datagram is
 *        queued and unretired; the replacement retires it as it takes it.
 *      - after the retire, before the dequeue: queued, and the slot's
 *        retired word names its ticket; the replacement takes it without
 *        retiring it again (load_retired), as the supervisor's drain does.
 *      - after the dequeue: the connection dies with the worker, retired.
 *        Its sender may not have closed its own copy yet: its close, after
 *        the death, is then the last one, and the kernel counts it in the
 *        dead slot's held at death all the same; the sender clears its
 *        giving record only after that close, and the reap waits for it.
 *      - sender killed after its credit, before a send returned success (a
 *        failed one included): its exit closes the connection, the last
 *        reference, and the kernel, finding the giving record, takes the
 *        credit back (ebpf/worker_load.bpf.c). After a successful send: the
 *        datagram holds the connection, the receiver retires it.
 *    Left (load.h): an interrupt-delivered kill between two adjacent
 *    atomic writes (the credit and the giving record; clearing the record
 *    and the take-back), which leaves the target one high; and, with user
 *    accounting, any sender kill before its send succeeds.
 *  - Leaving: store LEFT, then drain while inflight is above 0; a worker
 *    that has left forwards what its channel delivers to a sibling that has
 *    not (retired and dequeued first, so that it holds the connection alone
 *    and its death mid-send gives the credit back), admitting only when
 *    none is left. It then prints a "left" line:
 *    the hand-offs in flight to it when it stored LEFT (inflight_at_leave),
 *    and what it received and forwarded while draining (and how many of
 *    its decisions it made again over its life: repicked). The sender's
 *    "raise, then read state" and the leaver's "store LEFT, then read
 *    inflight" are each a write before a read (sequentially consistent
 *    atomics), so at least one side sees the other.
 *  - The supervisor marks a reaped worker LEFT before deciding on a respawn
 *    (a sender that picked it before the reap refuses after) and restarts
 *    its slot's count (what it held died with it); a replacement marks its
 *    slot NOT_STARTED first; when the supervisor gives up on an index it
 *    takes each queued connection off the dead worker's channel and closes
 *    it (within 250 ms), retiring each credit (unless the dead worker had).
 *    The supervisor reads nothing at the reap to correct inflight: nothing
 *    has to be corrected.
 *  - One worker pays nothing: with --workers 1 the mechanism is off.
 *    ACCEPTLAB_ACCEPT_SHARE=0 gives the knob-off arm (the bare race) in the
 *    same binary.
 *  - One worker woken (the default; ACCEPTLAB_ACCEPT_EXCLUSIVE=0 is the
 *    herd): the listener is registered level triggered with EPOLLEXCLUSIVE,
 *    so the kernel wakes one waiting worker per connection (a busy one is
 *    passed over, and a stopped one is not waiting), not all: no deferral
 *    (no sibling is left an edge), one accept per event, routed by the pick
 *    as above (kept, or handed over), then, once a sibling is less loaded,
 *    the listener re-added so the next connection wakes a sibling first
 *    (share_accept_exclusive). Every correction and fault case above is the
 *    hand-off's and the pick's, and holds on both paths; the claim
 *    machinery is the herd's alone.
 *
 * Test switches (environment): ACCEPTLAB_TEST_SEND_GAP_MS=N sleeps N ms between
 * the pick and the send (after the state check: the widest window for the
 * leaving race); ACCEPTLAB_TEST_PICK_GAP_MS=N sleeps N ms between an
 * acceptor's pick and its count (share_count: the window in which deciders
 * at once see each other's picks late); ACCEPTLAB_TEST_NO_PICK=1 disables
 * the pick (every acceptor keeps what it accepts), a broken build for
 * proving the gate can fail;
 * ACCEPTLAB_TEST_NO_DEFER=1: every connection the pick gives a sibling is
 * handed over (the hand-off's kill windows): the herd never defers, and a
 * worker woken alone never moves behind its siblings, so the kernel keeps
 * waking it while it is waiting.
 * ACCEPTLAB_TEST_STOP_AT=POINT makes the first worker to reach POINT (enum
 * stop_point) SIGSTOP itself there, where a test then kills it.
 * ACCEPTLAB_TEST_ARM_GAP_MS and ACCEPTLAB_TEST_MAX_RESPAWNS are the
 * harness's (worker.c, main.c); ACCEPTLAB_ACCOUNTING is load.h's.
 */
#include "../server.h"
#include "../scm_rights.h"
#include "../load.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define STATE_NOT_STARTED 0
#define STATE_LEFT (-1)
#define STATE_SERVING (-2)
#define STUCK_ASLEEP_NS 2000000LL  /* inside one handler this long and asleep there: skipped */
#define STUCK_ANY_NS 20000000LL    /* inside one handler this long, whatever its state: skipped */
#define CHANNEL_BUF (64 * 1024)
#define LEAVE_DRAIN_MS 2000       /* a leaver waits this long at most for in-flight hand-offs */
#define GIVE_UP_DRAIN_MS 250      /* the supervisor's drain of a dead worker's channel */
#define CLAIM_WAIT_NS 5000000LL   /* a deferral not resolved this long is taken over */
#define EXCLUSIVE_EVENTS (EPOLLIN | EPOLLEXCLUSIVE) /* ACCEPTLAB_ACCEPT_EXCLUSIVE's listener */

struct share_line {
	_Atomic int64_t state;
	_Atomic int64_t tid;
	struct handler_clock clock; /* the harness keeps it (w->handler_clock); pickers judge it */
	int64_t pad[3];
} __attribute__((aligned(64)));

struct share_page {
	_Atomic int64_t event_id; /* slot 0 */
	_Atomic int64_t rotation; /* slot 1 */
	_Atomic int64_t ticket;   /* slot 2: the last hand-off's ticket */
	_Atomic int64_t test_stop_armed; /* slot 3: ACCEPTLAB_TEST_STOP_AT not yet used */
	_Atomic int64_t claim;    /* slot 4: the deferral pending, 0 if none (claim_make) */
	_Atomic int64_t deferrals; /* slot 5: how many deferrals were made (renewals included) */
	_Atomic int64_t takeovers; /* slot 6: how many claims were taken over */
	_Atomic int64_t claim_seq; /* slot 7: the claims' sequence numbers */
	struct share_line line[MAX_SLOTS]; /* from slot 8: one per worker slot (server.h) */
};

/* Made by the supervisor before the fork; every worker inherits it. */
struct share {
	int on;
	int workers;
	int nslots;       /* lines and channels: one per worker slot */
	int page_fd;      /* the memfd the page is mapped from (--spawn-workers passes it) */
	struct share_page *page;
	struct load_account *load;
	int chan_recv[MAX_SLOTS];
	int chan_send[MAX_SLOTS];
	int test_send_gap_ms;
	int test_pick_gap_ms;
	int test_no_pick;
	int exclusive;    /* ACCEPTLAB_ACCEPT_EXCLUSIVE: one worker woken per connection */
	int test_no_defer;
	int test_stop_at; /* enum stop_point */
};

/* What a channel's datagram carries beside the descriptor. */
struct handoff_msg {
	struct sockaddr_in peer; /* the receiver need not call getpeername */
	uint64_t ticket;         /* unique per hand-off, never 0: what the receiver's retire names */
};

/* ACCEPTLAB_TEST_STOP_AT: the points where a kill once left a count wrong. */
enum stop_point {
	STOP_NONE,
	STOP_KEEP_HELD,    /* the acceptor raised held, before its tag */
	STOP_KEEP_TAGGED,  /* ... after its tag */
	STOP_PEEKED,       /* a receiver's peek returned the descriptor */
	STOP_RETIRED,      /* ... it retired the credit, the datagram still queued */
	STOP_DEQUEUED,     /* ... it dequeued it */
	STOP_TAGGED,       /* ... it tagged it */
	STOP_CREDITED,     /* a sender credited the target and recorded the giving */
	STOP_SEND_FAILED,  /* ... its sendmsg returned a failure */
	STOP_SENT,         /* ... its sendmsg succeeded, before its close */
};

static const char *const stop_names[] = {
	"", "keep-held", "keep-tagged", "peeked", "retired", "dequeued", "tagged", "credited", "send-failed", "sent",
};

/* Per worker. */
struct share_worker {
	struct share *sh;
	struct share_line *me;
	int left;
	uint64_t passed, received, forwarded, deferred, took_over, repicked;
};

static struct share the_share;

/* What the supervisor and every worker (forked or exec'd) read alike. */
static struct share *share_init(struct server *srv)
{
	struct share *sh = &the_share;

	srv->vshared = sh;
	sh->workers = srv->cfg.workers;
	sh->nslots = srv->nslots;
	sh->on = srv->cfg.workers > 1 && env_long("ACCEPTLAB_ACCEPT_SHARE", 1, 0, 1);
	sh->test_send_gap_ms = (int)env_long("ACCEPTLAB_TEST_SEND_GAP_MS", 0, 0, 60000);
	sh->test_pick_gap_ms = (int)env_long("ACCEPTLAB_TEST_PICK_GAP_MS", 0, 0, 60000);
	sh->test_no_pick = (int)env_long("ACCEPTLAB_TEST_NO_PICK", 0, 0, 1);
	sh->exclusive = sh->on && env_long("ACCEPTLAB_ACCEPT_EXCLUSIVE", 1, 0, 1);
	sh->test_no_defer = (int)env_long("ACCEPTLAB_TEST_NO_DEFER", 0, 0, 1);
	sh->test_stop_at = STOP_NONE;
	if (getenv("ACCEPTLAB_TEST_STOP_AT")) {
		const char *v = getenv("ACCEPTLAB_TEST_STOP_AT");

		for (int i = 1; i < (int)(sizeof(stop_names) / sizeof(stop_names[0])); i++)
			if (strcmp(v, stop_names[i]) == 0)
				sh->test_stop_at = i;
		if (sh->test_stop_at == STOP_NONE) {
			fprintf(stderr, "acceptlab-server: ACCEPTLAB_TEST_STOP_AT=%s: expected one of keep-held, "
				"keep-tagged, peeked, retired, dequeued, tagged, credited, send-failed, sent\n", v);
			exit(2);
		}
	}
	sh->page_fd = -1;
	return sh;
}

/* ACCEPTLAB_TEST_STOP_AT: the first worker of the server to reach point
 * stops itself there (SIGSTOP), as a kill delivered at that instruction
 * would find it; the test then kills it. */
static void test_stop(const struct share *sh, enum stop_point point)
{
	if (sh->test_stop_at == (int)point && atomic_exchange(&sh->page->test_stop_armed, 0))
		raise(SIGSTOP);
}

static int share_map_page(struct share *sh, char *err, size_t errlen)
{
	sh->page = mmap(NULL, sizeof(struct share_page), PROT_READ | PROT_WRITE, MAP_SHARED, sh->page_fd, 0);
	if (sh->page == MAP_FAILED) {
		snprintf(err, errlen, "mmap(shared page): %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int fdpass_before_fork(struct server *srv, char *err, size_t errlen)
{
	struct share *sh = share_init(srv);
	int buf = CHANNEL_BUF;

	if (!sh->on)
		return 0;
	sh->load = load_open(srv, LOAD_GIVING, err, errlen);
	if (!sh->load)
		return -1;
	srv->accounting = load_accounting(sh->load);
	if (load_note(sh->load))
		fprintf(stderr, "acceptlab-server: --variant %s: %s; counting load in user space\n", srv->cfg.variant->name,
			load_note(sh->load));
	/* A memfd rather than an anonymous mapping: the same page survives
	 * --spawn-workers' exec. */
	sh->page_fd = memfd_create("acceptlab-fdpass", MFD_CLOEXEC);
	if (sh->page_fd < 0 || ftruncate(sh->page_fd, sizeof(struct share_page)) < 0) {
		snprintf(err, errlen, "memfd for the shared page: %s", strerror(errno));
		return -1;
	}
	if (share_map_page(sh, err, errlen) < 0)
		return -1;
	atomic_store(&sh->page->test_stop_armed, sh->test_stop_at != STOP_NONE);
	for (int i = 0; i < sh->nslots; i++) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
			snprintf(err, errlen, "socketpair(channel %d): %s", i, strerror(errno));
			return -1;
		}
		setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
		setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
		sh->chan_recv[i] = sv[0];
		sh->chan_send[i] = sv[1];
	}
	return 0;
}

/* 1 if thread tid is asleep (S) or in uninterruptible wait (D). */
static int thread_asleep(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	return p && p[1] == ' ' && (p[2] == 'S' || p[2] == 'D');
}

/* The busy rule: slot's worker is in a slow view (a handler blocking inline)
 * and what it is given now would wait behind it:
 *  - inside one handler for over 2 ms and asleep there, or for over 20 ms
 *    whatever its state;
 *  - inside a handler for less, asleep there, when its last handler took
 *    over 2 ms (a worker whose handlers block: the next slow view has begun);
 *  - just out of a handler judged slow, for as long again as that one took
 *    (the next one may follow at once).
 * A worker merely preempted, or late to run its loop, is not in a slow
 * view: it is runnable, not asleep, and serves what it is given once it
 * runs. The verdict is written into the worker's clock, so each handler is
 * read from /proc at most once and the worker knows afterwards that it was
 * slow. */
static int slow_view(const struct share_line *l, int64_t now)
{
	struct handler_clock *hc = (struct handler_clock *)&l->clock;
	int64_t since, age;

	if (now < __atomic_load_n(&hc->slow_until, __ATOMIC_RELAXED))
		return 1;
	since = __atomic_load_n(&hc->since, __ATOMIC_RELAXED);
	if (!since)
		return 0;
	if (__atomic_load_n(&hc->judged, __ATOMIC_RELAXED) == since)
		return 1;
	age = now - since;
	if (age <= STUCK_ASLEEP_NS && __atomic_load_n(&hc->last_ns, __ATOMIC_RELAXED) <= STUCK_ASLEEP_NS)
		return 0;
	if (age <= STUCK_ANY_NS && !thread_asleep((pid_t)atomic_load(&l->tid)))
		return 0; /* running or runnable: it will be out of the handler soon */
	__atomic_store_n(&hc->judged, since, __ATOMIC_RELAXED);
	return 1;
}

/* 1 if sibling slot may be given a connection now. */
static int sibling_takes(struct share_worker *sw, int slot, int64_t now)
{
	const struct share_line *l = &sw->sh->page->line[slot];

	return atomic_load(&l->state) == STATE_SERVING && !slow_view(l, now);
}

/* w's own load as the pick weighs it: just out of a slow view, any sibling
 * that takes is better (INT64_MAX - 1, above every real load). */
static int64_t own_load(struct worker *w, struct share_worker *sw, int64_t now)
{
	if (now < __atomic_load_n(&sw->me->clock.slow_until, __ATOMIC_RELAXED))
		return INT64_MAX - 1;
	return load_of(sw->sh->load, w->slot);
}

/* The least-loaded worker for a new connection: the acceptor itself unless a
 * sibling has strictly less, siblings scanned from a rotating start. With
 * include_self 0 (a leaver forwarding) only siblings count; -1 if none.
 * seen (if not NULL): the chosen worker's load as read here. */
static int share_pick(struct worker *w, struct share_worker *sw, int include_self, int64_t *seen)
{
	struct share *sh = sw->sh;
	int64_t now = now_ns(), best_load = INT64_MAX;
	int n = sh->workers, per = sh->nslots / sh->workers, best = -1;
	/* Rotate over indexes, not slots: half the slots are unused outside a
	 * reload, and a start that fell on one would favour the next index. */
	int start = (int)(atomic_fetch_add(&sh->page->rotation, 1) % (int64_t)n);

	if (include_self) {
		best = w->slot;
		best_load = own_load(w, sw, now);
	}
	for (int k = 0; k < n * per; k++) {
		int i = (start + k / per) % n + (k % per) * n; /* index, then its other slot */
		int64_t load;

		if (i == w->slot || !sibling_takes(sw, i, now))
			continue;
		load = load_of(sh->load, i);
		if (load < best_load) {
			best = i;
			best_load = load;
		}
	}
	if (seen)
		*seen = best_load;
	return best;
}

/* 1 if t, whose load now counts w's decision for it, is still no more than
 * one above every worker the pick would consider (w itself and the
 * siblings that take): the decision stands. */
static int share_pick_stands(struct worker *w, struct share_worker *sw, int t)
{
	struct share *sh = sw->sh;
	int64_t now = now_ns(), lt = load_of(sh->load, t);
	int per = sh->nslots / sh->workers;

	if (t != w->slot && own_load(w, sw, now) + 1 < lt)
		return 0;
	for (int i = 0; i < sh->workers * per; i++)
		if (i != t && i != w->slot && sibling_takes(sw, i, now) && load_of(sh->load, i) + 1 < lt)
			return 0;
	return 1;
}

/* Counts w's decision to route the connection from peer to t, whose load
 * the pick saw as seen: t's held if t is w (load_hold), else t's credit and
 * w's giving record (load_give).
 * The pick read the loads before this count, so two acceptors deciding at
 * once, or one preempted between its pick and its count, can each give the
 * same least-loaded worker one more, and a round ends with it two over. So
 * the decision is checked again once counted. If t now reads no more than
 * seen + 1, no one else counted for it meanwhile, and the others, at least
 * seen when the pick read them, have only been raised since (or lowered by
 * a close, which the pick never waits for): it stands, at the cost of
 * reading the one load just written. Otherwise it is checked against every
 * load as it is now (share_pick_stands): the counts are sequentially
 * consistent, so of two deciders the later one's check sees the other's
 * count. One that leaves t more than one above a worker the pick would
 * consider is taken back (load_unhold, load_give_back: the states a kill
 * already knows) and made again, at most PICK_TRIES times in all; the last
 * stands as made. Returns t as counted. */
#define PICK_TRIES 4

static int share_count(struct worker *w, struct share_worker *sw, int t, int64_t seen, const struct sockaddr_in *peer)
{
	struct share *sh = sw->sh;

	for (int tries = 1;; tries++) {
		if (t == w->slot)
			load_hold(sh->load, t);
		else
			load_give(sh->load, w->slot, t, peer->sin_addr.s_addr, peer->sin_port);
		if (tries == PICK_TRIES || sh->test_no_pick || load_of(sh->load, t) <= seen + 1 ||
		    share_pick_stands(w, sw, t))
			return t;
		if (t == w->slot)
			load_unhold(sh->load, t);
		else
			load_give_back(sh->load, w->slot, t);
		sw->repicked++;
		t = share_pick(w, sw, 1, &seen);
	}
}

/* w keeps fd, which no one is credited with: its held raised first
 * (share_count or load_hold: siblings see the decision at once), then the
 * tag; inflight is never touched. */
static void share_keep(struct worker *w, struct share_worker *sw, int fd)
{
	test_stop(sw->sh, STOP_KEEP_HELD);
	load_tag(sw->sh->load, w->slot, fd);
	test_stop(sw->sh, STOP_KEEP_TAGGED);
	if (worker_admit(w, fd) < 0)
		load_closed_unread(sw->sh->load, w->slot); /* closed unserved, never read */
}

/* Hands fd, which w holds alone, to sibling t, once the caller has made
 * the credit and the giving record (share_count or load_give): t's state
 * read again, then the send. 0 if it went (our reference closed); -1
 * (credit taken back) if the caller must keep it. */
static int share_give(struct worker *w, struct share_worker *sw, int t, int fd, const struct sockaddr_in *peer)
{
	struct share *sh = sw->sh;
	struct handoff_msg msg = { .peer = *peer };

	test_stop(sh, STOP_CREDITED);
	if (atomic_load(&sh->page->line[t].state) == STATE_LEFT)
		goto back; /* left after the pick: the credit raised first tells the leaver to wait */
	if (sh->test_send_gap_ms)
		sleep_ms(sh->test_send_gap_ms);
	do /* never 0 in the low half: a slot that has retired nothing reads 0 there */
		msg.ticket = (uint64_t)atomic_fetch_add(&sh->page->ticket, 1) + 1;
	while ((uint32_t)msg.ticket == 0);
	if (scm_rights_send(sh->chan_send[t], fd, &msg, sizeof(msg)) < 0) {
		test_stop(sh, STOP_SEND_FAILED);
		goto back;
	}
	test_stop(sh, STOP_SENT);
	close(fd);
	load_given(sh->load, w->slot); /* after the close: the reap waits for it (load.h) */
	atomic_fetch_add(&sh->page->event_id, 1);
	sw->passed++;
	return 0;
back:
	load_give_back(sh->load, w->slot, t);
	return -1;
}

/* fd, just accepted by w, goes to t (share_pick's choice, made before the
 * accept, t's load seen as seen), or to where share_count's check moves it:
 * handed over, or kept when that is w or the hand-off is refused. */
static void share_route(struct worker *w, struct share_worker *sw, int t, int64_t seen, int fd,
			const struct sockaddr_in *peer)
{
	if (sw->sh->test_pick_gap_ms)
		sleep_ms(sw->sh->test_pick_gap_ms);
	t = share_count(w, sw, t, seen, peer);
	if (t != w->slot) {
		if (share_give(w, sw, t, fd, peer) == 0)
			return;
		load_hold(sw->sh->load, w->slot);
	}
	share_keep(w, sw, fd);
}

/* Deferral (the herd's: ACCEPTLAB_ACCEPT_EXCLUSIVE=0): the acceptor that
 * the pick would make hand a connection to sibling t leaves the accept to
 * t instead, and no hand-off is needed.
 * Sound because every worker watches the listener edge triggered in its own
 * epoll and accepts until EAGAIN: anything queued arrived after t's last
 * EAGAIN, so t has an edge pending for it and will run its accept loop
 * (where t's own pick hands on what it should not keep). Only a deferrer
 * has spent its edge without emptying the queue, so:
 *  - the page's claim word says a deferral is pending (claim_make: to
 *    whom, since when, and a sequence number). A worker defers only when
 *    no claim is pending or the pending one names the same t, which it
 *    then renews (its sequence changes, its start does not). The target of
 *    a claim never defers, so two workers never leave the queue to each
 *    other; the others hand off as before.
 *  - an accept loop that read the claim at its start and ended in EAGAIN
 *    emptied the queue after the claim was made, and clears it (unless it
 *    was renewed meanwhile).
 *  - a claim older than CLAIM_WAIT_NS from its start (t killed, stopped,
 *    leaving or out of descriptors) is taken over by the first worker to
 *    see it (pass_begin caps every worker's wait while one is pending): it
 *    clears the claim and runs an accept loop that does not defer, so
 *    nothing waits longer than that for its accept.
 *  - the deferrer writes the claim, then reads t's state: a t that stored
 *    LEFT before that read is not deferred to (the claim is taken back if
 *    it was new); one that leaves after it is covered by the takeover.
 * A dead deferrer leaves nothing behind: t accepts, or the takeover does. */
#define CLAIM_SEQ_BITS 16
#define CLAIM_TIME_SHIFT 20 /* the start, in units of 2^20 ns (about 1 ms) */

static int64_t claim_make(int64_t start_ns, uint64_t seq, int t)
{
	return (int64_t)(((uint64_t)start_ns >> CLAIM_TIME_SHIFT) << (CLAIM_SEQ_BITS + 8) |
			 (seq & ((1u << CLAIM_SEQ_BITS) - 1)) << 8 | (uint64_t)(t + 1));
}

static int claim_target(int64_t c)
{
	return (int)(c & 0xff) - 1;
}

static int64_t claim_start_ns(int64_t c)
{
	return (int64_t)(((uint64_t)c >> (CLAIM_SEQ_BITS + 8)) << CLAIM_TIME_SHIFT);
}

/* 1 if the caller leaves what is queued to t, having claimed it (or
 * renewed the claim); 0 if it must accept. */
static int share_defer(struct share_worker *sw, int t)
{
	struct share_page *pg = sw->sh->page;
	int64_t c = atomic_load(&pg->claim), n;

	if (c != 0 && claim_target(c) != t)
		return 0;
	n = claim_make(c ? claim_start_ns(c) : now_ns(), (uint64_t)atomic_fetch_add(&pg->claim_seq, 1) + 1, t);
	if (!atomic_compare_exchange_strong(&pg->claim, &c, n))
		return 0;
	if (atomic_load(&pg->line[t].state) != STATE_SERVING) { /* left after the pick */
		if (!c) /* a renewed claim stays: its takeover is already due */
			atomic_compare_exchange_strong(&pg->claim, &n, 0);
		return 0;
	}
	atomic_fetch_add(&pg->deferrals, 1);
	sw->deferred++;
	return 1;
}

/* Accepts until EAGAIN (or a deferral, unless may_defer is 0), routing each
 * connection by the pick made just before its accept; then clears the
 * claim that was pending when the loop began (whoever it names), if the
 * loop emptied the queue and the claim was not renewed meanwhile. */
static void share_accept_loop(struct worker *w, struct share_worker *sw, int may_defer)
{
	struct share *sh = sw->sh;
	struct sockaddr_in peer;
	uint64_t again = w->accept_eagain;
	int64_t seen = atomic_load(&sh->page->claim);
	int fd;

	for (;;) {
		int64_t load_seen = 0;
		int t = sh->test_no_pick ? w->slot : share_pick(w, sw, 1, &load_seen);

		if (t != w->slot && may_defer && share_defer(sw, t))
			return;
		if ((fd = worker_accept_one(w, &peer)) < 0)
			break;
		share_route(w, sw, t, load_seen, fd, &peer);
	}
	if (seen && w->accept_eagain != again)
		atomic_compare_exchange_strong(&sh->page->claim, &seen, 0);
}

/* Takes the datagram at the head of our channel, peeked as fd (-1: it
 * carried none we could receive) and msg. The credit is retired while the
 * datagram is still queued, and only if it has not been already (by a
 * predecessor killed between its retire and its dequeue), so a kill at any
 * point leaves it either queued and not retired, queued and retired (the
 * ticket says so), or taken and retired. Then, once we have left, it goes
 * to a sibling that has not (we hold it alone by then, so our death
 * mid-send gives the credit back), or, as otherwise, it is ours. */
static void share_received(struct worker *w, struct share_worker *sw, int fd, const struct handoff_msg *msg)
{
	struct share *sh = sw->sh;
	int chan = sh->chan_recv[w->slot], t = -1, retired = load_retired(sh->load, w->slot, msg->ticket);

	if (fd < 0) { /* no descriptor we could take (EMFILE): the kernel closes it as it is dequeued */
		if (!retired)
			load_retire(sh->load, w->slot, msg->ticket);
		scm_rights_drop(chan);
		return;
	}
	test_stop(sh, STOP_PEEKED);
	sw->received++;
	if (sw->left)
		t = share_pick(w, sw, 0, NULL);
	if (t < 0)
		load_hold(sh->load, w->slot); /* before the retire: a reader never sees it in neither */
	if (!retired)
		load_retire(sh->load, w->slot, msg->ticket);
	test_stop(sh, STOP_RETIRED);
	scm_rights_drop(chan);
	test_stop(sh, STOP_DEQUEUED);
	if (t >= 0) {
		load_give(sh->load, w->slot, t, msg->peer.sin_addr.s_addr, msg->peer.sin_port);
		if (share_give(w, sw, t, fd, &msg->peer) == 0) {
			sw->forwarded++;
			return;
		}
		load_hold(sh->load, w->slot);
	}
	load_tag(sh->load, w->slot, fd);
	test_stop(sh, STOP_TAGGED);
	if (worker_admit(w, fd) < 0)
		load_closed_unread(sh->load, w->slot); /* closed unserved, never read */
}

/* Takes up to max datagrams off our channel (fewer when it empties first).
 * The loop takes one per readiness: the channel's registration is level
 * triggered, so epoll reports it again while more are queued, and the one
 * hand-off that usually waits there costs no second peek to find the
 * channel empty. Leaving takes all. */
static void share_take_from_channel(struct worker *w, unsigned max)
{
	struct share_worker *sw = w->vstate;
	int chan = sw->sh->chan_recv[w->slot];
	struct handoff_msg msg;
	size_t len;
	int fd;

	while (max-- > 0 && ((fd = scm_rights_peek(chan, &msg, sizeof(msg), &len)) >= 0 || errno == EBADMSG)) {
		if (len < sizeof(msg)) { /* not a sibling's: nothing was credited for it */
			if (fd >= 0)
				close(fd);
			scm_rights_drop(chan);
			continue;
		}
		share_received(w, sw, fd, &msg);
	}
}

static int fdpass_start(struct worker *w, char *err, size_t errlen)
{
	struct share *sh = w->srv->vshared;
	struct share_worker *sw = calloc(1, sizeof(*sw));
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = VARIANT_TAG };

	if (!sw) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	sw->sh = sh;
	w->vstate = sw;
	if (sh->on) {
		sw->me = &sh->page->line[w->slot];
		/* First act: not started (the supervisor wrote LEFT at the reap). */
		atomic_store(&sw->me->state, STATE_NOT_STARTED);
		atomic_store(&sw->me->tid, w->tid);
		load_slot_owned(sh->load, w->slot, w->pid);
		memset(&sw->me->clock, 0, sizeof(sw->me->clock));
		w->handler_clock = &sw->me->clock;
		/* A worker process drops its siblings' read ends (the
		 * supervisor keeps them); threads share one fd table. */
		for (int i = 0; i < sh->nslots && !w->srv->cfg.threads; i++)
			if (i != w->slot)
				close(sh->chan_recv[i]);
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, sh->chan_recv[w->slot], &ev) < 0) {
			snprintf(err, errlen, "epoll_ctl(channel): %s", strerror(errno));
			return -1;
		}
	}
	return worker_watch_listener(w, sh->exclusive ? EXCLUSIVE_EVENTS : EPOLLIN | EPOLLET, err, errlen);
}

/* The loop runs next: siblings may pick us now. */
static void fdpass_serving(struct worker *w)
{
	struct share_worker *sw = w->vstate;

	if (sw->sh->on && !sw->left)
		atomic_store(&sw->me->state, STATE_SERVING);
}

/* One worker woken (the default): the kernel woke this worker alone, so no
 * sibling is left an edge to defer to: one accept per event, routed by the
 * pick made before it (kept, or handed to the sibling it names). The kernel
 * wakes the first waiting worker in the order they registered the
 * listener, so the order is kept close to the pick's: once a sibling is
 * less loaded than this worker (the pick would give it the next
 * connection), this worker deletes and re-adds the listener, which puts it
 * at the back; while none is, it stays where it is and is woken again. */
static void share_accept_exclusive(struct worker *w, struct share_worker *sw)
{
	struct sockaddr_in peer;
	int64_t seen = 0;
	int t = sw->sh->test_no_pick ? w->slot : share_pick(w, sw, 1, &seen), fd;

	if ((fd = worker_accept_one(w, &peer)) < 0)
		return;
	share_route(w, sw, t, seen, fd, &peer);
	/* Not while accepting rests (out of descriptors): its resume adds the
	 * listener back, and an add now would be refused. Not without the pick
	 * (ACCEPTLAB_TEST_NO_PICK), nor with ACCEPTLAB_TEST_NO_DEFER: the
	 * kernel's order is then left alone, and a worker it keeps waking hands
	 * over what the pick gives a sibling. */
	if (!sw->sh->test_no_pick && !sw->sh->test_no_defer && !w->accept_paused_until &&
	    share_pick(w, sw, 1, NULL) != w->slot &&
	    worker_listener_enable(w, EXCLUSIVE_EVENTS, 0) == 0)
		worker_listener_enable(w, EXCLUSIVE_EVENTS, 1);
}

static void fdpass_readable(struct worker *w)
{
	struct share_worker *sw = w->vstate;
	struct sockaddr_in peer;
	int fd;

	if (sw->sh->exclusive) {
		share_accept_exclusive(w, sw);
		return;
	}
	if (sw->sh->on) {
		share_accept_loop(w, sw, !sw->sh->test_no_pick && !sw->sh->test_no_defer);
		return;
	}
	while ((fd = worker_accept_one(w, &peer)) >= 0)
		worker_admit(w, fd);
}

/* The pending claim a worker that still accepts watches for its takeover,
 * or 0. */
static int64_t claim_watched(const struct worker *w, const struct share_worker *sw)
{
	if (!sw->sh->on || sw->left || w->stopping)
		return 0;
	return atomic_load(&sw->sh->page->claim);
}

/* While a deferral is pending, no worker waits past its takeover time. */
static int fdpass_pass_begin(struct worker *w)
{
	struct share_worker *sw = w->vstate;
	int64_t c = claim_watched(w, sw), left;

	if (!c)
		return -1;
	left = claim_start_ns(c) + CLAIM_WAIT_NS - now_ns();
	return left <= 0 ? 0 : (int)(left / 1000000) + 1;
}

/* A deferral pending too long: the first worker to see it clears it and
 * empties the queue itself. */
static void fdpass_pass_woke(struct worker *w)
{
	struct share_worker *sw = w->vstate;
	int64_t c = claim_watched(w, sw);

	if (!c || w->accept_paused_until)
		return;
	if (now_ns() - claim_start_ns(c) < CLAIM_WAIT_NS ||
	    !atomic_compare_exchange_strong(&sw->sh->page->claim, &c, 0))
		return;
	sw->took_over++;
	atomic_fetch_add(&sw->sh->page->takeovers, 1);
	share_accept_loop(w, sw, 0);
}

static void fdpass_channel_ready(struct worker *w)
{
	share_take_from_channel(w, 1);
}

static void fdpass_conn_closed(struct worker *w)
{
	struct share_worker *sw = w->vstate;

	if (sw->sh->on)
		load_closed(sw->sh->load, w->slot);
}

static void fdpass_leaving(struct worker *w)
{
	struct share_worker *sw = w->vstate;
	int chan;
	int64_t deadline, inflight = 0, at_leave;
	uint64_t received = sw->received, forwarded = sw->forwarded;

	if (!sw->sh->on)
		return;
	sw->left = 1;
	atomic_store(&sw->me->state, STATE_LEFT); /* then read inflight: the handshake */
	at_leave = load_inflight(sw->sh->load, w->slot);
	chan = sw->sh->chan_recv[w->slot];
	deadline = now_ns() + (int64_t)LEAVE_DRAIN_MS * 1000000;
	for (;;) {
		struct pollfd pfd = { .fd = chan, .events = POLLIN };

		share_take_from_channel(w, UINT_MAX);
		inflight = load_inflight(sw->sh->load, w->slot);
		if (inflight <= 0)
			break;
		if (now_ns() > deadline) {
			fprintf(stderr, "acceptlab-server: worker %d: leaving with %lld hand-offs announced "
				"but not received\n", w->index, (long long)inflight);
			break;
		}
		poll(&pfd, 1, 10); /* a sender between its raise and its send */
	}
	/* What the leaving handshake had to do: hand-offs in flight to us when
	 * we stored LEFT, and what we received and forwarded since; and how
	 * many of our decisions share_count made again over our life. */
	emit_line(STDOUT_FILENO, "{\"event\":\"left\",\"index\":%d,\"slot\":%d,\"pid\":%d,\"inflight_at_leave\":%lld,"
		  "\"received\":%llu,\"forwarded\":%llu,\"repicked\":%llu}", w->index, w->slot, (int)w->pid,
		  (long long)at_leave, (unsigned long long)(sw->received - received),
		  (unsigned long long)(sw->forwarded - forwarded), (unsigned long long)sw->repicked);
}

static void fdpass_reaped(struct server *srv, int slot, pid_t pid)
{
	struct share *sh = srv->vshared;

	if (!sh->on)
		return;
	/* Before any respawn decision: senders that read it now refuse. */
	atomic_store(&sh->page->line[slot].state, STATE_LEFT);
	__atomic_store_n(&sh->page->line[slot].clock.since, 0, __ATOMIC_RELAXED);
	load_slot_reaped(sh->load, slot, slot % sh->workers, pid); /* what it held died with it */
}

/* No replacement will read slot's channel: close what is queued there,
 * running the leaver's half of the handshake for the dead worker. */
static void fdpass_given_up(struct server *srv, int slot)
{
	struct share *sh = srv->vshared;
	int64_t deadline, drained = 0;

	if (!sh->on)
		return;
	deadline = now_ns() + (int64_t)GIVE_UP_DRAIN_MS * 1000000;
	for (;;) {
		struct handoff_msg msg;
		size_t len;
		int fd = scm_rights_recv(sh->chan_recv[slot], &msg, sizeof(msg), &len);

		if (fd >= 0 || errno == EBADMSG) {
			if (fd >= 0) {
				close(fd); /* never read: a client that retries loses nothing */
				drained++;
			}
			/* Retired already if the dead worker did so and died before
			 * its dequeue; no worker will write the word again. */
			if (len >= sizeof(msg) && !load_retired(sh->load, slot, msg.ticket))
				load_retire(sh->load, slot, msg.ticket);
			continue;
		}
		if (load_inflight(sh->load, slot) <= 0 || now_ns() > deadline)
			break;
		{
			struct pollfd pfd = { .fd = sh->chan_recv[slot], .events = POLLIN };
			poll(&pfd, 1, 5);
		}
	}
	emit_line(STDOUT_FILENO, "{\"event\":\"handoffs_closed\",\"index\":%d,\"slot\":%d,\"closed\":%lld}",
		  slot % sh->workers, slot, (long long)drained);
}

/* A slot's line of the shared page, for GET /variant. */
static int line_members(void *ctx, int slot, char *buf, size_t len)
{
	const struct share_line *l = &((struct share *)ctx)->page->line[slot];
	int64_t now = now_ns(), since = __atomic_load_n(&l->clock.since, __ATOMIC_RELAXED);
	int n = snprintf(buf, len, "\"state\":%lld,\"in_handler_ms\":%.3f,\"slow_view\":%s,",
			 (long long)atomic_load(&l->state), since ? (double)(now - since) / 1e6 : 0.0,
			 slow_view(l, now) ? "true" : "false");

	return n < 0 ? 0 : (size_t)n < len ? n : (int)len - 1;
}

static int fdpass_describe(struct worker *w, char *buf, size_t len)
{
	struct share_worker *sw = w->vstate;
	struct share *sh = sw->sh;
	int64_t claim = sh->on ? atomic_load(&sh->page->claim) : 0;
	size_t off;

	off = (size_t)snprintf(buf, len, "{\"variant\":\"fdpass\",\"on\":%s,\"exclusive\":%s,\"worker\":%d,\"slot\":%d,\"passed\":%llu,"
			       "\"received\":%llu,\"forwarded\":%llu,\"deferred\":%llu,\"took_over\":%llu,\"repicked\":%llu",
			       sh->on ? "true" : "false", sh->exclusive ? "true" : "false", w->index, w->slot,
			       (unsigned long long)sw->passed,
			       (unsigned long long)sw->received, (unsigned long long)sw->forwarded,
			       (unsigned long long)sw->deferred, (unsigned long long)sw->took_over,
			       (unsigned long long)sw->repicked);
	if (sh->on && off < len)
		off += (size_t)snprintf(buf + off, len - off, ",\"event_id\":%lld,\"rotation\":%lld,\"deferrals\":%lld,"
					"\"takeovers\":%lld,\"claim_pending\":%s,\"claim_target\":%d,",
					(long long)atomic_load(&sh->page->event_id), (long long)atomic_load(&sh->page->rotation),
					(long long)atomic_load(&sh->page->deferrals),
					(long long)atomic_load(&sh->page->takeovers), claim ? "true" : "false",
					claim ? claim_target(claim) : -1);
	if (sh->on && off < len)
		off += (size_t)load_describe(sh->load, sh->nslots, sh->workers, line_members, sh, buf + off, len - off);
	if (off < len)
		off += (size_t)snprintf(buf + off, len - off, "}\n");
	return off < len ? (int)off : (int)len - 1;
}

/* --spawn-workers: the page's memfd, every slot's read and send end, then
 * the load accounting's descriptors. */
static int fdpass_spawn_fds(const struct server *srv, int *fds, int max)
{
	const struct share *sh = srv->vshared;
	int n = 0;

	if (!sh->on || max < 1 + 2 * sh->nslots)
		return 0;
	fds[n++] = sh->page_fd;
	for (int i = 0; i < sh->nslots; i++) {
		fds[n++] = sh->chan_recv[i];
		fds[n++] = sh->chan_send[i];
	}
	return n + load_spawn_fds(sh->load, fds + n, max - n);
}

static int fdpass_spawn_import(struct server *srv, const int *fds, int n, char *err, size_t errlen)
{
	struct share *sh = share_init(srv);
	int own = 1 + 2 * sh->nslots;

	if (!sh->on)
		return 0;
	if (n < own) {
		snprintf(err, errlen, "expected at least %d inherited descriptors, got %d", own, n);
		return -1;
	}
	sh->page_fd = fds[0];
	for (int i = 0; i < sh->nslots; i++) {
		sh->chan_recv[i] = fds[1 + 2 * i];
		sh->chan_send[i] = fds[2 + 2 * i];
	}
	sh->load = load_import(srv, LOAD_GIVING, fds + own, n - own, err, errlen);
	if (!sh->load)
		return -1;
	return share_map_page(sh, err, errlen);
}

const struct accept_variant variant_fdpass = {
	.name = "fdpass",
	.mechanism = "accept sharing: the kernel wakes one worker per connection (`EPOLLEXCLUSIVE`, a "
		     "worker moved behind its siblings once one is less loaded), and each connection goes "
		     "to the least-loaded worker: the woken one keeps it or passes it over `SCM_RIGHTS`; a "
		     "sibling stuck in a slow request handler is skipped; `ACCEPTLAB_ACCEPT_SHARE=0` is the "
		     "knob-off arm; `ACCEPTLAB_ACCEPT_EXCLUSIVE=0` is the herd: every worker woken, and one "
		     "that is not the least loaded leaves the accept to the one that is (deferral), or hands "
		     "the connection over when it cannot",
	.before_fork = fdpass_before_fork,
	.worker_start = fdpass_start,
	.serving = fdpass_serving,
	.pass_begin = fdpass_pass_begin,
	.pass_woke = fdpass_pass_woke,
	.listener_readable = fdpass_readable,
	.variant_fd_ready = fdpass_channel_ready,
	.conn_closed = fdpass_conn_closed,
	.leaving = fdpass_leaving,
	.worker_reaped = fdpass_reaped,
	.worker_given_up = fdpass_given_up,
	.describe = fdpass_describe,
	.spawn_fds = fdpass_spawn_fds,
	.spawn_import = fdpass_spawn_import,
};
