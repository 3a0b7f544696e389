/* test_shared_epoll.c: the --shared-epoll listener stall after EMFILE,
 * replayed in one thread against servers/accept.c and servers/shared_epoll.c.
 *
 * In --shared-epoll (threads mode) every thread waits in ONE epoll
 * instance, and the listener is registered there once, EPOLLIN|EPOLLET: the
 * first thread's ADD (or DEL) is everyone's. Each thread still keeps its own
 * listener_watched and rest_took_listener. This interleaving of two threads,
 * A and B, once stalled the server for good:
 *
 *  1. A and B both watch the listener (A's ADD made the registration, B's
 *     ADD found it: EEXIST, counted as watching). A connection waits in the
 *     accept queue.
 *  2. A's accept fails with EMFILE: accept_rest(A) DELs the registration
 *     (A rest_took_listener = 1, listener_watched = 0).
 *  3. B's accept fails with EMFILE too: accept_rest(B)'s DEL finds nothing
 *     (ENOENT, accepted in shared mode); B rest_took_listener = 1,
 *     listener_watched = 0.
 *  4. A's rest ends: accept_resume(A) ADDs the listener back; the queue is
 *     not empty, so epoll reports an edge.
 *  5. That edge goes to B (epoll_wait returns it to B), and B's accept fails
 *     with EMFILE again: accept_rest(B) with listener_watched == 0 DELs
 *     nothing. The registration stays, its edge used up.
 *  6. Descriptors are freed. B's rest ends: accept_resume(B) ADDs and gets
 *     EEXIST. The old code took EEXIST as done, so nothing re-checked the
 *     listener: edge-triggered, it reports again only on a new connection,
 *     and with the queue full none comes; the waiting connections were never
 *     accepted. The fixed code re-arms with EPOLL_CTL_MOD, which polls the
 *     listener anew and reports it while its queue is not empty.
 *
 * Here two struct workers share one epoll fd and one real listening socket
 * on 127.0.0.1 (port 0), a real client connect()s so the queue holds a
 * connection, and accept() fails with a real EMFILE: RLIMIT_NOFILE's soft
 * limit is lowered and the table filled with dup() until EMFILE. The steps
 * are the worker's own functions (worker_listener_enable, worker_accept_one,
 * accept_rest, accept_resume), called in the order above; the threads'
 * epoll_wait calls are epoll_wait(timeout 0) here. The final check is that,
 * after step 6, epoll_wait reports the listener and an accept then returns
 * the client's connection: with the old EEXIST branch epoll_wait reports
 * nothing (the stall), and that check fails.
 *
 * accept.c (the accept path) and shared_epoll.c (the one registration's
 * epoll_ctl calls) are #included to reach their static functions; the
 * program links every other server source except main.c. Two wrappers,
 * defined before the includes, record what the worker's accept4() and
 * epoll_ctl() on the listener returned, so the steps can check the errors
 * the story names (errno after worker_accept_one is not the accept's:
 * accept_rest's DEL may have set it).
 *
 * Output as the other C unit tests: a line per failed check, then
 * "N passed, N failed in N cases" (exit 1 if any failed). An alarm kills the program if
 * anything blocks.
 */
#include <errno.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#define WATCHDOG_SECONDS 30

/* ---- wrappers around the worker's system calls ------------------------- */

static int last_accept_rc, last_accept_errno;

static int test_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	int r = accept4(fd, addr, len, flags);

	last_accept_rc = r;
	last_accept_errno = r < 0 ? errno : 0;
	return r;
}

/* The epoll_ctl calls on the listener, in order. */
struct ctl_call {
	int op;
	int rc;
	int err;
};
#define MAX_CTL 32
static struct ctl_call ctl_log[MAX_CTL];
static int nctl;
static int ctl_watch_fd = -1;

static int test_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	int r = epoll_ctl(epfd, op, fd, ev), e = errno;

	if (fd == ctl_watch_fd && nctl < MAX_CTL)
		ctl_log[nctl++] = (struct ctl_call){ .op = op, .rc = r, .err = r < 0 ? e : 0 };
	errno = e;
	return r;
}

#define accept4 test_accept4
#define epoll_ctl test_epoll_ctl
#include "../../servers/accept.c"
#include "../../servers/shared_epoll.c"
#undef accept4
#undef epoll_ctl

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>

#include "check.h"

static const char *op_name(int op)
{
	return op == EPOLL_CTL_ADD ? "ADD" : op == EPOLL_CTL_DEL ? "DEL" : op == EPOLL_CTL_MOD ? "MOD" : "?";
}

/* Waits up to timeout_ms; returns how many events, and whether one of
 * them was the listener's. */
static int wait_listener(int epfd, int timeout_ms, int *listener)
{
	struct epoll_event evs[4];
	int n;

	do
		n = epoll_wait(epfd, evs, 4, timeout_ms);
	while (n < 0 && errno == EINTR);
	*listener = 0;
	for (int i = 0; i < n; i++)
		if (evs[i].data.u64 == LISTENER_TAG && (evs[i].events & EPOLLIN))
			*listener = 1;
	return n;
}

/* Whether fd is a socket connected to the client socket cfd. */
static int connected_to(int fd, int cfd)
{
	struct sockaddr_in peer, client;
	socklen_t plen = sizeof(peer), clen = sizeof(client);

	if (getpeername(fd, (struct sockaddr *)&peer, &plen) < 0 ||
	    getsockname(cfd, (struct sockaddr *)&client, &clen) < 0)
		return 0;
	return peer.sin_port == client.sin_port && peer.sin_addr.s_addr == client.sin_addr.s_addr;
}

static void test_emfile_interleaving(void)
{
	struct server srv;
	struct worker a, b;
	struct sockaddr_in sa;
	struct rlimit saved, low;
	char err[ERRLEN];
	int lfd, epfd, cfd, devnull, port, n, listener, fd, mark;
	int *fillers, nfill = 0, fill_errno;
	const uint32_t events = EPOLLIN | EPOLLET;

	memset(&srv, 0, sizeof(srv));
	srv.conn_set = &shared_conns; /* only its listener_ctl is reached */

	lfd = net_listen_tcp("127.0.0.1", 0, 0, err, sizeof(err));
	if (lfd < 0) {
		CHECK(0, "setup: listen on 127.0.0.1: %s", err);
		return;
	}
	port = net_local_port(lfd);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (port <= 0 || epfd < 0 || cfd < 0 || devnull < 0) {
		CHECK(0, "setup: port %d epoll %d client %d /dev/null %d: %s", port, epfd, cfd, devnull,
		      strerror(errno));
		return;
	}
	srv.listen_fd = lfd;
	srv.bound_port = port;
	ctl_watch_fd = lfd;

	memset(&a, 0, sizeof(a));
	a.srv = &srv;
	a.index = 0;
	a.epfd = epfd;
	a.listen_fd = lfd;
	a.ready_fd = -1;
	a.conn_set = srv.conn_set; /* as worker_run sets it */
	b = a;
	b.index = 1;

	/* 1. Both threads watch the listener: A's ADD makes the one
	 * registration, B's finds it. */
	CHECK(worker_watch_listener(&a, events, err, sizeof(err)) == 0, "step 1: A watches: %s", err);
	CHECK(nctl >= 1 && ctl_log[0].op == EPOLL_CTL_ADD && ctl_log[0].rc == 0,
	      "step 1: A's ADD succeeds");
	mark = nctl;
	CHECK(worker_watch_listener(&b, events, err, sizeof(err)) == 0, "step 1: B watches: %s", err);
	CHECK(nctl > mark && ctl_log[mark].op == EPOLL_CTL_ADD && ctl_log[mark].err == EEXIST,
	      "step 1: B's ADD finds A's registration (EEXIST)");
	CHECK(a.listener_watched == 1 && b.listener_watched == 1,
	      "step 1: both watching (A %d, B %d)", a.listener_watched, b.listener_watched);

	/* A connection waits in the accept queue; its edge woke A. (The wait
	 * has a timeout: the handshake's last ACK may still be on its way.) */
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(connect(cfd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "setup: connect: %s", strerror(errno));
	n = wait_listener(epfd, 5000, &listener);
	CHECK(n == 1 && listener, "setup: the connection's edge reports the listener (%d events)", n);

	/* Out of descriptors: the soft limit a little above ours, the rest of
	 * the table filled with dup() until EMFILE. */
	if (getrlimit(RLIMIT_NOFILE, &saved) < 0) {
		CHECK(0, "setup: getrlimit: %s", strerror(errno));
		return;
	}
	low = saved;
	fd = lfd > epfd ? lfd : epfd;
	fd = fd > cfd ? fd : cfd;
	fd = fd > devnull ? fd : devnull;
	low.rlim_cur = (rlim_t)fd + 8;
	if (low.rlim_cur > saved.rlim_cur)
		low.rlim_cur = saved.rlim_cur;
	fillers = calloc(low.rlim_cur, sizeof(*fillers));
	if (!fillers || setrlimit(RLIMIT_NOFILE, &low) < 0) {
		CHECK(0, "setup: lower RLIMIT_NOFILE to %llu: %s", (unsigned long long)low.rlim_cur,
		      fillers ? strerror(errno) : "out of memory");
		free(fillers);
		return;
	}
	while ((rlim_t)nfill < low.rlim_cur && (fd = dup(devnull)) >= 0)
		fillers[nfill++] = fd;
	fill_errno = errno;
	CHECK(fill_errno == EMFILE, "setup: dup() stopped with %s, want EMFILE", strerror(fill_errno));

	/* 2. A's accept fails with EMFILE: its rest DELs the registration. */
	mark = nctl;
	CHECK(worker_accept_one(&a, NULL) == -1 && last_accept_errno == EMFILE,
	      "step 2: A's accept fails with EMFILE (rc %d, %s)", last_accept_rc, strerror(last_accept_errno));
	CHECK(nctl == mark + 1 && ctl_log[mark].op == EPOLL_CTL_DEL && ctl_log[mark].rc == 0,
	      "step 2: A's rest DELs the registration");
	CHECK(a.listener_watched == 0 && a.rest_took_listener == 1 && a.accept_paused_until != 0,
	      "step 2: A rests with the listener taken (watched %d, took %d)", a.listener_watched,
	      a.rest_took_listener);

	/* 3. B's accept fails with EMFILE too: its DEL finds nothing. */
	mark = nctl;
	CHECK(worker_accept_one(&b, NULL) == -1 && last_accept_errno == EMFILE,
	      "step 3: B's accept fails with EMFILE (rc %d, %s)", last_accept_rc, strerror(last_accept_errno));
	CHECK(nctl == mark + 1 && ctl_log[mark].op == EPOLL_CTL_DEL && ctl_log[mark].err == ENOENT,
	      "step 3: B's DEL finds no registration (ENOENT)");
	CHECK(b.listener_watched == 0 && b.rest_took_listener == 1 && b.accept_paused_until != 0,
	      "step 3: B rests with the listener counted as taken (watched %d, took %d)",
	      b.listener_watched, b.rest_took_listener);

	/* 4. A's rest ends (descriptors still short): the ADD succeeds, and
	 * the queue not being empty makes an edge. */
	mark = nctl;
	accept_resume(&a);
	CHECK(nctl == mark + 1 && ctl_log[mark].op == EPOLL_CTL_ADD && ctl_log[mark].rc == 0,
	      "step 4: A's resume ADDs the listener back");
	CHECK(a.listener_watched == 1 && a.rest_took_listener == 0 && a.accept_paused_until == 0,
	      "step 4: A watches again (watched %d, took %d)", a.listener_watched, a.rest_took_listener);

	/* 5. That edge goes to B, still resting; B's accept fails with EMFILE
	 * again and, not watching, takes nothing out. */
	n = wait_listener(epfd, 0, &listener);
	CHECK(n == 1 && listener, "step 5: epoll_wait returns the listener's edge (%d events)", n);
	mark = nctl;
	CHECK(worker_accept_one(&b, NULL) == -1 && last_accept_errno == EMFILE,
	      "step 5: B's accept fails with EMFILE again (rc %d, %s)", last_accept_rc,
	      strerror(last_accept_errno));
	CHECK(nctl == mark, "step 5: B's second rest makes no epoll_ctl call (made %d)", nctl - mark);
	CHECK(b.listener_watched == 0 && b.rest_took_listener == 1,
	      "step 5: B still counts the listener as taken (watched %d, took %d)", b.listener_watched,
	      b.rest_took_listener);
	n = wait_listener(epfd, 0, &listener);
	CHECK(n == 0, "step 5: the edge is used up: epoll_wait reports nothing (%d events)", n);

	/* 6. Descriptors are freed; B's rest ends: its ADD finds the
	 * registration A made in step 4. */
	for (int i = 0; i < nfill; i++)
		close(fillers[i]);
	free(fillers);
	CHECK(setrlimit(RLIMIT_NOFILE, &saved) == 0, "step 6: restore RLIMIT_NOFILE: %s", strerror(errno));
	mark = nctl;
	accept_resume(&b);
	CHECK(nctl > mark && ctl_log[mark].op == EPOLL_CTL_ADD && ctl_log[mark].err == EEXIST,
	      "step 6: B's resume ADD finds the registration (EEXIST)");
	CHECK(b.listener_watched == 1 && b.rest_took_listener == 0 && b.accept_paused_until == 0,
	      "step 6: B watches again (watched %d, took %d)", b.listener_watched, b.rest_took_listener);

	/* The final check: the queue still holds the connection, so the
	 * listener must be reported, with no new connection to make an edge.
	 * The old code (EEXIST taken as done) left the registration as step 5
	 * left it: nothing reported, now or ever, and the connection never
	 * accepted. */
	n = wait_listener(epfd, 0, &listener);
	CHECK(n == 1 && listener,
	      "final: epoll_wait reports the listener after B's resume (%d events): the registration "
	      "stays disarmed and the waiting connection is never accepted", n);
	if (!(n == 1 && listener)) {
		for (int i = mark; i < nctl; i++)
			printf("  B's resume: epoll_ctl %s -> %s\n", op_name(ctl_log[i].op),
			       ctl_log[i].rc == 0 ? "0" : strerror(ctl_log[i].err));
	} else {
		/* As the loop would: the thread handed the event accepts. */
		fd = worker_accept_one(&b, NULL);
		CHECK(fd >= 0 && connected_to(fd, cfd), "final: accept returns the client's connection (fd %d, %s)",
		      fd, fd >= 0 ? "connected elsewhere" : strerror(last_accept_errno));
		if (fd >= 0)
			close(fd);
	}
	CHECK(a.accept_errors == 1 && b.accept_errors == 2, "counts: accept_errors A %llu B %llu, want 1 and 2",
	      (unsigned long long)a.accept_errors, (unsigned long long)b.accept_errors);

	close(cfd);
	close(devnull);
	close(epfd);
	close(lfd);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(WATCHDOG_SECONDS);

	RUN(test_emfile_interleaving);
	return check_summary();
}
