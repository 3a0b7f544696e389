/* threads.c: threads mode. One process, N worker threads, each running the
 * same worker loop (worker.c) as a worker process does; the main thread
 * plays the supervisor's remaining parts: it binds (server_open), announces
 * the threads once all serve, and stops them on SIGTERM or SIGINT.
 *
 * What differs from process mode, and why:
 *  - No respawn. A thread that crashes takes the process with it; a thread
 *    that fails to start stops the server with exit 1.
 *  - The stop: SIGTERM and SIGINT are blocked in every thread and read by
 *    the main thread from a signalfd, which then sends SIGUSR1 to each worker
 *    thread (pthread_kill). A worker unblocks SIGUSR1 only inside
 *    epoll_pwait, exactly as a worker process does SIGTERM, so a request in
 *    progress finishes first.
 *  - /pid answers the thread's id (app.c), the ready line lists tids.
 */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

struct thread_slot {
	pthread_t th;
	struct worker w;
	int created;
	int ready;
	int done;
	int status;
	int done_wr;
	struct worker_ready rec;
};

static void *thread_main(void *arg)
{
	struct thread_slot *t = arg;
	char err[ERRLEN];

	t->w.tid = (pid_t)syscall(SYS_gettid);
	if (worker_pin(t->w.srv, t->w.index, err, sizeof(err)) < 0) {
		fprintf(stderr, "acceptlab-server: worker %d: %s\n", t->w.index, err);
		t->status = 1;
	} else {
		t->status = worker_run(&t->w);
	}
	/* Tell the main thread (one int, atomic on a pipe). */
	if (write(t->done_wr, &t->w.index, sizeof(int)) != sizeof(int)) {
		/* the main thread is gone: nothing to tell */
	}
	return NULL;
}

static void stop_all(struct thread_slot *slots, int n)
{
	for (int i = 0; i < n; i++)
		if (slots[i].created && !slots[i].done)
			pthread_kill(slots[i].th, SIGUSR1);
}

int threads_run(struct server *srv)
{
	static struct thread_slot slots[MAX_WORKERS];
	int n = srv->cfg.workers, ready_pipe[2], done_pipe[2], sigfd, rc;
	int nready = 0, ndone = 0, stopping = 0, failed = -1, announced = 0;
	int64_t deadline = INT64_MAX;
	sigset_t mask;

	/* Blocked here, so in every thread created from here: SIGTERM and
	 * SIGINT reach the signalfd, SIGUSR1 only the epoll_pwait of a worker. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	sigdelset(&mask, SIGUSR1);
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0 || pipe2(ready_pipe, O_CLOEXEC) < 0 || pipe2(done_pipe, O_CLOEXEC) < 0) {
		fprintf(stderr, "acceptlab-server: signalfd/pipe: %s\n", strerror(errno));
		return 1;
	}
	rc = server_open(srv);
	if (rc)
		return rc;

	for (int i = 0; i < n; i++) {
		struct thread_slot *t = &slots[i];

		memset(t, 0, sizeof(*t));
		t->w.srv = srv;
		t->w.index = i;
		t->w.slot = i;
		t->w.pid = getpid();
		t->w.listen_fd = srv->listen_fd;
		t->w.ready_fd = ready_pipe[1];
		t->done_wr = done_pipe[1];
		rc = pthread_create(&t->th, NULL, thread_main, t);
		if (rc) {
			fprintf(stderr, "acceptlab-server: pthread_create: %s\n", strerror(rc));
			failed = i;
			stopping = 1;
			deadline = now_ns() + (int64_t)srv->cfg.stop_grace_ms * 1000000;
			stop_all(slots, i);
			n = i; /* only those created are waited for */
			break;
		}
		t->created = 1;
	}

	while (ndone < n) {
		struct pollfd pfd[3] = {
			{ .fd = sigfd, .events = POLLIN },
			{ .fd = ready_pipe[0], .events = POLLIN },
			{ .fd = done_pipe[0], .events = POLLIN },
		};

		if (poll(pfd, 3, stopping ? 100 : -1) < 0 && errno != EINTR) {
			fprintf(stderr, "acceptlab-server: poll: %s\n", strerror(errno));
			break;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP) {
					/* A reload replaces worker processes; threads share
					 * one, so there is nothing to replace one at a time. */
					emit_line(STDOUT_FILENO, "{\"event\":\"reload_refused\",\"reason\":"
						  "\"threads mode has no worker processes to replace\"}");
					continue;
				}
				if (stopping)
					continue;
				stopping = 1;
				deadline = now_ns() + (int64_t)srv->cfg.stop_grace_ms * 1000000;
				emit_line(STDOUT_FILENO, "{\"event\":\"stopping\",\"signal\":%d}", (int)si.ssi_signo);
				stop_all(slots, n);
			}
		}
		if (pfd[1].revents & POLLIN) {
			struct worker_ready r;

			if (read(ready_pipe[0], &r, sizeof(r)) == sizeof(r) && r.index >= 0 && r.index < n &&
			    !slots[r.index].ready) {
				slots[r.index].ready = 1;
				slots[r.index].rec = r;
				if (++nready == n && !announced && !stopping) {
					struct worker_ready recs[MAX_WORKERS];

					for (int i = 0; i < n; i++)
						recs[i] = slots[i].rec;
					announce_ready(srv, recs, n);
					announced = 1;
				}
			}
		}
		if (pfd[2].revents & POLLIN) {
			int index;

			if (read(done_pipe[0], &index, sizeof(index)) == sizeof(index) && index >= 0 &&
			    index < n && !slots[index].done) {
				slots[index].done = 1;
				ndone++;
				pthread_join(slots[index].th, NULL);
				if (!stopping) {
					/* A worker thread ended on its own: it failed. */
					failed = index;
					stopping = 1;
					deadline = now_ns() + (int64_t)srv->cfg.stop_grace_ms * 1000000;
					fprintf(stderr, "acceptlab-server: worker thread %d ended (status %d); stopping\n",
						index, slots[index].status);
					stop_all(slots, n);
				}
			}
		}
		if (stopping && now_ns() > deadline) {
			/* Past the grace: returning ends the process and every
			 * thread still in it, as SIGKILL ends late worker processes. */
			fprintf(stderr, "acceptlab-server: %d worker thread(s) still busy after the grace; exiting\n",
				n - ndone);
			break;
		}
	}
	if (failed >= 0) {
		emit_line(STDOUT_FILENO, "{\"event\":\"stopped\",\"reason\":\"worker thread %d failed\"}", failed);
		return 1;
	}
	emit_line(STDOUT_FILENO, "{\"event\":\"stopped\",\"reason\":\"signal\"}");
	return 0;
}
