/* fdpass: accept sharing. Workers race for the one shared listener as in
 * bare (EPOLLET, accept until EAGAIN), but the worker that wins an accept
 * passes the connection to the least-loaded sibling over SCM_RIGHTS, so the
 * race decides who accepts, not who serves.
 *
 * The parts, each with the reason it exists:
 *  - Slots: everything per worker below exists once per slot (server.h:
 *    index i uses slot i or i + workers, so a reload's new worker and the
 *    old one it replaces never share a line or a channel).
 *  - Channels: before the fork, one non-blocking SOCK_DGRAM socketpair per
 *    slot (64 KB buffers); a worker reads its slot's, every worker holds
 *    every send end. The supervisor keeps every read end: a respawn inherits its
 *    index's channel, and on giving up it can close what was queued there.
 *  - The shared page (a memfd mapped MAP_SHARED before the fork, so it
 *    survives --spawn-workers' exec): word 0 an event id (bumped on every
 *    hand-off), word 1 a rotation counter, and one cache line per slot:
 *    state, active, pending, taken.
 *    state: NOT_STARTED (0, what a fresh page holds before anything writes),
 *    PARKED (-2), LEFT (-1), or while inside a loop pass the pass's start
 *    time in ns. active: open connections, published at the end of every
 *    pass. pending: connections passed to it and not yet retired. taken:
 *    what it has received and not yet retired.
 *  - The pick: least active + pending, ties to the acceptor, scanning from a
 *    rotating start (over indexes) so equal siblings take turns; a sibling that has left,
 *    has not started, or has been inside one pass for over 2 ms (a slow view
 *    running inline) is skipped. The acceptor counts itself live (its open
 *    connections, including those kept earlier in this pass), or every tie
 *    in a burst it drains in one pass would go to it.
 *  - The hand-off: raise the target's pending BEFORE sending, read its state
 *    again and keep the connection if it has left; on any send failure take
 *    pending back and keep it. Nothing is ever dropped.
 *  - Admission through the accept path's own tail (worker_admit); pending
 *    and taken are retired at the end of the pass that admitted, right after
 *    the new active is published.
 *  - Leaving: store LEFT, then drain while pending less received is above 0;
 *    a worker that has left forwards what its channel delivers to a sibling
 *    that has not, admitting only when none is left. The sender's "raise,
 *    then read state" and the leaver's "store LEFT, then read pending" are
 *    each a write before a read (sequentially consistent atomics), so at
 *    least one side sees the other.
 *  - The supervisor marks a reaped worker LEFT before deciding on a respawn
 *    (a sender that picked it before the reap refuses after); a replacement
 *    marks its index NOT_STARTED first and subtracts its predecessor's taken
 *    from pending; when the supervisor gives up on an index it takes each
 *    queued connection off the dead worker's channel and closes it (within
 *    250 ms), retiring pending.
 *  - One worker pays nothing: with --workers 1 the mechanism is off.
 *    ACCEPTLAB_ACCEPT_SHARE=0 gives the knob-off arm (the bare race) in the
 *    same binary.
 *
 * Test knobs (environment): ACCEPTLAB_TEST_SEND_GAP_MS=N sleeps N ms between
 * the pick and the send (after the state check: the widest window for the
 * leaving race); ACCEPTLAB_TEST_NO_PICK=1 disables the pick (every acceptor
 * keeps what it accepts), a broken build for proving the gate can fail.
 * ACCEPTLAB_TEST_ARM_GAP_MS and ACCEPTLAB_TEST_MAX_RESPAWNS are the
 * harness's (worker.c, main.c).
 */
#include "../server.h"
#include "../fdpass.h"

#include <errno.h>
#include <poll.h>
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
#define STATE_PARKED (-2)
#define BUSY_PASS_NS 2000000LL    /* inside one pass longer than this: skipped */
#define CHANNEL_BUF (64 * 1024)
#define LEAVE_DRAIN_MS 2000       /* a leaver waits this long at most for in-flight hand-offs */
#define GIVE_UP_DRAIN_MS 250      /* the supervisor's drain of a dead worker's channel */

struct share_line {
	_Atomic int64_t state, active, pending, taken;
	int64_t pad[4];
} __attribute__((aligned(64)));

struct share_page {
	_Atomic int64_t event_id; /* slot 0 */
	_Atomic int64_t rotation; /* slot 1 */
	int64_t pad[6];
	struct share_line line[MAX_SLOTS]; /* from slot 8: one per worker slot (server.h) */
};

/* Made by the supervisor before the fork; every worker inherits it. */
struct share {
	int on;
	int workers;
	int nslots;       /* lines and channels: one per worker slot */
	int page_fd;      /* the memfd the page is mapped from (--spawn-workers passes it) */
	struct share_page *page;
	int chan_recv[MAX_SLOTS];
	int chan_send[MAX_SLOTS];
	int test_send_gap_ms;
	int test_no_pick;
};

/* Per worker. */
struct share_worker {
	struct share *sh;
	struct share_line *me;
	int64_t taken_this_pass;
	int started; /* PARKED written once the loop runs */
	int left;
	uint64_t passed, received, forwarded;
};

static struct share the_share;

/* What the supervisor and every worker (forked or exec'd) read alike. */
static struct share *share_init(struct server *srv)
{
	struct share *sh = &the_share;

	srv->vshared = sh;
	sh->workers = srv->cfg.workers;
	sh->nslots = srv->nslots;
	sh->on = srv->cfg.workers > 1 && env_knob("ACCEPTLAB_ACCEPT_SHARE", 1, 0, 1);
	sh->test_send_gap_ms = (int)env_knob("ACCEPTLAB_TEST_SEND_GAP_MS", 0, 0, 60000);
	sh->test_no_pick = (int)env_knob("ACCEPTLAB_TEST_NO_PICK", 0, 0, 1);
	sh->page_fd = -1;
	return sh;
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
	/* A memfd rather than an anonymous mapping: the same page survives
	 * --spawn-workers' exec. */
	sh->page_fd = memfd_create("acceptlab-fdpass", MFD_CLOEXEC);
	if (sh->page_fd < 0 || ftruncate(sh->page_fd, sizeof(struct share_page)) < 0) {
		snprintf(err, errlen, "memfd for the shared page: %s", strerror(errno));
		return -1;
	}
	if (share_map_page(sh, err, errlen) < 0)
		return -1;
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

/* The load a sibling publishes, or -1 if it must not be picked. */
static int64_t sibling_load(const struct share_line *l, int64_t now)
{
	int64_t st = atomic_load(&l->state);

	if (st == STATE_LEFT || st == STATE_NOT_STARTED)
		return -1;
	if (st > 0 && now - st > BUSY_PASS_NS)
		return -1; /* stuck in one pass: a slow view running inline */
	return atomic_load(&l->active) + atomic_load(&l->pending);
}

/* The least-loaded worker for a new connection: the acceptor itself unless a
 * sibling has strictly less, siblings scanned from a rotating start. With
 * include_self 0 (a leaver forwarding) only siblings count; -1 if none. */
static int share_pick(struct worker *w, struct share_worker *sw, int include_self)
{
	struct share *sh = sw->sh;
	int64_t now = now_ns(), best_load = INT64_MAX;
	int n = sh->workers, per = sh->nslots / sh->workers, best = -1;
	/* Rotate over indexes, not slots: half the slots are unused outside a
	 * reload, and a start that fell on one would favour the next index. */
	int start = (int)(atomic_fetch_add(&sh->page->rotation, 1) % (int64_t)n);

	if (include_self) {
		best = w->slot;
		/* Live: what it holds now, including what it kept this pass, plus
		 * hand-offs to it not yet received. */
		best_load = w->open_conns + atomic_load(&sw->me->pending) - atomic_load(&sw->me->taken);
	}
	for (int k = 0; k < n * per; k++) {
		int i = (start + k / per) % n + (k % per) * n; /* index, then its other slot */
		int64_t load;

		if (i == w->slot)
			continue;
		load = sibling_load(&sh->page->line[i], now);
		if (load >= 0 && load < best_load) {
			best = i;
			best_load = load;
		}
	}
	return best;
}

/* Hands fd to worker t. Returns 0 if it went (our reference closed), -1 if
 * the caller must keep it. */
static int share_handoff(struct share_worker *sw, int t, int fd, const struct sockaddr_in *peer)
{
	struct share *sh = sw->sh;
	struct share_line *l = &sh->page->line[t];

	atomic_fetch_add(&l->pending, 1); /* before the send: never below what is in flight */
	if (atomic_load(&l->state) == STATE_LEFT) {
		atomic_fetch_sub(&l->pending, 1);
		return -1;
	}
	if (sh->test_send_gap_ms) {
		struct timespec ts = { sh->test_send_gap_ms / 1000, (long)(sh->test_send_gap_ms % 1000) * 1000000 };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	if (fdpass_send(sh->chan_send[t], fd, peer, sizeof(*peer)) < 0) {
		atomic_fetch_sub(&l->pending, 1);
		return -1;
	}
	close(fd);
	atomic_fetch_add(&sh->page->event_id, 1);
	sw->passed++;
	return 0;
}

static void share_route(struct worker *w, int fd, const struct sockaddr_in *peer)
{
	struct share_worker *sw = w->vstate;
	int t;

	if (!sw->sh->on || sw->sh->test_no_pick) {
		worker_admit(w, fd);
		return;
	}
	t = share_pick(w, sw, 1);
	if (t == w->slot || share_handoff(sw, t, fd, peer) < 0)
		worker_admit(w, fd);
}

/* A connection that came through our channel: admit it, or, once we have
 * left, forward it to a sibling that has not (admitting only if none). */
static void share_received(struct worker *w, struct share_worker *sw, int fd, const struct sockaddr_in *peer)
{
	atomic_fetch_add(&sw->me->taken, 1);
	sw->taken_this_pass++;
	sw->received++;
	if (sw->left) {
		int t = share_pick(w, sw, 0);
		if (t >= 0 && share_handoff(sw, t, fd, peer) == 0) {
			sw->forwarded++;
			return;
		}
	}
	worker_admit(w, fd);
}

/* Drains our channel until it is empty. */
static void share_drain_channel(struct worker *w)
{
	struct share_worker *sw = w->vstate;
	struct sockaddr_in peer;
	size_t len;
	int fd;

	while ((fd = fdpass_recv(sw->sh->chan_recv[w->slot], &peer, sizeof(peer), &len)) >= 0 ||
	       errno == EBADMSG)
		if (fd >= 0)
			share_received(w, sw, fd, &peer);
}

/* Publishes active, then retires what this pass admitted from the channel. */
static void share_publish(struct worker *w, struct share_worker *sw)
{
	atomic_store(&sw->me->active, w->open_conns);
	if (sw->taken_this_pass) {
		atomic_fetch_sub(&sw->me->pending, sw->taken_this_pass);
		atomic_fetch_sub(&sw->me->taken, sw->taken_this_pass);
		sw->taken_this_pass = 0;
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
		/* First act: not started (the supervisor wrote LEFT at the reap),
		 * and what a predecessor received but never retired comes off. */
		atomic_store(&sw->me->state, STATE_NOT_STARTED);
		atomic_fetch_sub(&sw->me->pending, atomic_exchange(&sw->me->taken, 0));
		atomic_store(&sw->me->active, 0);
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
	return worker_watch_listener(w, EPOLLIN | EPOLLET, err, errlen);
}

static int fdpass_pass_begin(struct worker *w)
{
	struct share_worker *sw = w->vstate;

	if (sw->sh->on && !sw->started) {
		sw->started = 1; /* the loop runs: siblings may pick us now */
		if (!sw->left)
			atomic_store(&sw->me->state, STATE_PARKED);
	}
	return -1;
}

static void fdpass_pass_woke(struct worker *w)
{
	struct share_worker *sw = w->vstate;

	if (sw->sh->on && !sw->left)
		atomic_store(&sw->me->state, now_ns());
}

static void fdpass_readable(struct worker *w)
{
	struct sockaddr_in peer;
	int fd;

	while ((fd = worker_accept_one(w, &peer)) >= 0)
		share_route(w, fd, &peer);
}

static void fdpass_channel_ready(struct worker *w)
{
	share_drain_channel(w);
}

static void fdpass_pass_end(struct worker *w)
{
	struct share_worker *sw = w->vstate;

	if (!sw->sh->on)
		return;
	share_publish(w, sw);
	if (!sw->left)
		atomic_store(&sw->me->state, STATE_PARKED);
}

static void fdpass_leaving(struct worker *w)
{
	struct share_worker *sw = w->vstate;
	int chan;
	int64_t deadline;

	if (!sw->sh->on)
		return;
	sw->left = 1;
	atomic_store(&sw->me->state, STATE_LEFT); /* then read pending: the handshake */
	chan = sw->sh->chan_recv[w->slot];
	deadline = now_ns() + (int64_t)LEAVE_DRAIN_MS * 1000000;
	for (;;) {
		struct pollfd pfd = { .fd = chan, .events = POLLIN };

		share_drain_channel(w);
		share_publish(w, sw);
		if (atomic_load(&sw->me->pending) - atomic_load(&sw->me->taken) <= 0)
			break;
		if (now_ns() > deadline) {
			fprintf(stderr, "acceptlab-server: worker %d: leaving with %lld hand-offs announced "
				"but not received\n", w->index,
				(long long)(atomic_load(&sw->me->pending) - atomic_load(&sw->me->taken)));
			break;
		}
		poll(&pfd, 1, 10); /* a sender between its raise and its send */
	}
}

static void fdpass_reaped(struct server *srv, int slot, pid_t pid)
{
	struct share *sh = srv->vshared;

	(void)pid;
	if (sh->on) /* before any respawn decision: senders that read it now refuse */
		atomic_store(&sh->page->line[slot].state, STATE_LEFT);
}

/* No replacement will read index's channel: close what is queued there,
 * running the leaver's half of the handshake for the dead worker. */
static void fdpass_given_up(struct server *srv, int slot)
{
	struct share *sh = srv->vshared;
	struct share_line *l;
	int64_t deadline, drained = 0, dead_taken;

	if (!sh->on)
		return;
	l = &sh->page->line[slot];
	dead_taken = atomic_exchange(&l->taken, 0);
	atomic_fetch_sub(&l->pending, dead_taken);
	deadline = now_ns() + (int64_t)GIVE_UP_DRAIN_MS * 1000000;
	for (;;) {
		struct sockaddr_in peer;
		size_t len;
		int fd = fdpass_recv(sh->chan_recv[slot], &peer, sizeof(peer), &len);

		if (fd >= 0) {
			close(fd); /* never read: a client that retries loses nothing */
			drained++;
			atomic_fetch_sub(&l->pending, 1);
			continue;
		}
		if (errno == EBADMSG)
			continue;
		if (atomic_load(&l->pending) <= 0 || now_ns() > deadline)
			break;
		{
			struct pollfd pfd = { .fd = sh->chan_recv[slot], .events = POLLIN };
			poll(&pfd, 1, 5);
		}
	}
	emit_line(STDOUT_FILENO, "{\"event\":\"handoffs_closed\",\"index\":%d,\"slot\":%d,\"closed\":%lld}",
		  slot % sh->workers, slot,
		  (long long)drained);
}

static int fdpass_describe(struct worker *w, char *buf, size_t len)
{
	struct share_worker *sw = w->vstate;
	struct share *sh = sw->sh;
	size_t off;

	off = (size_t)snprintf(buf, len, "{\"variant\":\"fdpass\",\"on\":%s,\"worker\":%d,\"slot\":%d,\"passed\":%llu,"
			       "\"received\":%llu,\"forwarded\":%llu", sh->on ? "true" : "false", w->index, w->slot,
			       (unsigned long long)sw->passed, (unsigned long long)sw->received,
			       (unsigned long long)sw->forwarded);
	if (sh->on && off < len) {
		off += (size_t)snprintf(buf + off, len - off, ",\"event_id\":%lld,\"rotation\":%lld,\"lines\":[",
					(long long)atomic_load(&sh->page->event_id),
					(long long)atomic_load(&sh->page->rotation));
		for (int i = 0; i < sh->nslots && off < len; i++) {
			const struct share_line *l = &sh->page->line[i];
			off += (size_t)snprintf(buf + off, len - off,
						"%s{\"slot\":%d,\"state\":%lld,\"active\":%lld,\"pending\":%lld,\"taken\":%lld}",
						i ? "," : "", i, (long long)atomic_load(&l->state),
						(long long)atomic_load(&l->active), (long long)atomic_load(&l->pending),
						(long long)atomic_load(&l->taken));
		}
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "]");
	}
	if (off < len)
		off += (size_t)snprintf(buf + off, len - off, "}\n");
	return off < len ? (int)off : (int)len - 1;
}

/* --spawn-workers: the page's memfd, then every slot's read and send end. */
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
	return n;
}

static int fdpass_spawn_import(struct server *srv, const int *fds, int n, char *err, size_t errlen)
{
	struct share *sh = share_init(srv);

	if (!sh->on)
		return 0;
	if (n != 1 + 2 * sh->nslots) {
		snprintf(err, errlen, "expected %d inherited descriptors, got %d", 1 + 2 * sh->nslots, n);
		return -1;
	}
	sh->page_fd = fds[0];
	for (int i = 0; i < sh->nslots; i++) {
		sh->chan_recv[i] = fds[1 + 2 * i];
		sh->chan_send[i] = fds[2 + 2 * i];
	}
	return share_map_page(sh, err, errlen);
}

const struct accept_variant variant_fdpass = {
	.name = "fdpass",
	.mechanism = "accept sharing: the acceptor passes each connection to the least-loaded sibling "
		     "over SCM_RIGHTS (ACCEPTLAB_ACCEPT_SHARE=0: the bare race)",
	.before_fork = fdpass_before_fork,
	.worker_start = fdpass_start,
	.pass_begin = fdpass_pass_begin,
	.pass_woke = fdpass_pass_woke,
	.listener_readable = fdpass_readable,
	.variant_fd_ready = fdpass_channel_ready,
	.pass_end = fdpass_pass_end,
	.leaving = fdpass_leaving,
	.worker_reaped = fdpass_reaped,
	.worker_given_up = fdpass_given_up,
	.describe = fdpass_describe,
	.spawn_fds = fdpass_spawn_fds,
	.spawn_import = fdpass_spawn_import,
};
