/* supervisor.c: binds before fork, forks the workers, announces them, reaps
 * and respawns crashed ones within limits, and stops them all on SIGTERM.
 *
 * It reaps with WNOHANG alone (no WUNTRACED), so a SIGSTOPped worker is
 * neither a crash nor a respawn: it is simply not reported by waitpid. */
#include "server.h"
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAST_DEATH_NS 1000000000LL /* a death within 1 s of the fork is "fast" */
#define FAST_DEATH_LIMIT 5         /* that many fast deaths in a row: give up on the index */
#define HOUR_NS 3600000000000LL

struct slot {
	pid_t pid;         /* 0 when no process holds the index */
	pid_t tid;
	int64_t forked_ns;
	int64_t reaped_ns;  /* when its predecessor was reaped (0: first fork) */
	int ready;
	int fast_deaths;
	int given_up;
	char cpu[64];
};

struct supervisor {
	struct server *srv;
	struct slot slots[MAX_WORKERS];
	int64_t respawn_ns[4096]; /* ring of recent respawn times, for the hourly limit */
	int nrespawns;
	int ready_rd, ready_wr;
	int sigfd;
	int announced;
	int stopping;
	int64_t stop_deadline;
};

static void describe_status(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
}

/* Forks the worker for index i. Returns 0, or -1 if fork failed. */
static int spawn(struct supervisor *s, int i)
{
	struct server *srv = s->srv;
	pid_t parent = getpid(), pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct worker w;
		char err[ERRLEN];
		sigset_t none;

		/* Die with the supervisor: never leave a worker running alone. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(0);
		signal(SIGINT, SIG_IGN); /* Ctrl-C reaches the supervisor, which stops us */
		signal(SIGCHLD, SIG_DFL);
		close(s->sigfd);
		close(s->ready_rd);
		if (srv->port_claim_fd >= 0)
			close(srv->port_claim_fd); /* the supervisor's to hold */
		sigemptyset(&none);
		sigaddset(&none, SIGCHLD);
		sigaddset(&none, SIGINT);
		pthread_sigmask(SIG_UNBLOCK, &none, NULL); /* SIGTERM stays blocked: worker_run decides */

		if (worker_pin(srv, i, err, sizeof(err)) < 0) {
			fprintf(stderr, "acceptlab-server: worker %d: %s\n", i, err);
			_exit(1);
		}
		memset(&w, 0, sizeof(w));
		w.srv = srv;
		w.index = i;
		w.pid = getpid();
		w.tid = (pid_t)syscall(SYS_gettid);
		w.listen_fd = srv->listen_fd;
		w.ready_fd = s->ready_wr;
		_exit(worker_run(&w));
	}
	s->slots[i].pid = pid;
	s->slots[i].ready = 0;
	s->slots[i].forked_ns = now_ns();
	return 0;
}

void announce_ready(const struct server *srv, const struct worker_ready *recs, int n)
{
	char buf[4096];
	size_t off = 0;

	for (int i = 0; i < n && off < sizeof(buf); i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off,
					"%s{\"index\":%d,\"pid\":%d,\"tid\":%d,\"cpu\":\"%s\"}",
					off ? "," : "", recs[i].index, (int)recs[i].pid, (int)recs[i].tid,
					recs[i].cpu);
	emit_line(STDOUT_FILENO,
		  "{\"event\":\"ready\",\"port\":%d,\"variant\":\"%s\",\"mode\":\"%s\",\"workers\":[%s]}",
		  srv->bound_port, srv->cfg.variant->name, srv->cfg.threads ? "threads" : "process", buf);
}

static void announce(struct supervisor *s)
{
	struct worker_ready recs[MAX_WORKERS];
	int n = 0;

	for (int i = 0; i < s->srv->cfg.workers; i++) {
		const struct slot *sl = &s->slots[i];
		if (sl->given_up)
			continue;
		recs[n].index = i;
		recs[n].pid = sl->pid;
		recs[n].tid = sl->tid;
		memcpy(recs[n].cpu, sl->cpu, sizeof(recs[n].cpu));
		n++;
	}
	announce_ready(s->srv, recs, n);
	s->announced = 1;
}

/* Prints the ready line once every index that has not been given up serves. */
static void maybe_announce(struct supervisor *s)
{
	int ready = 0;

	if (s->announced)
		return;
	for (int i = 0; i < s->srv->cfg.workers; i++) {
		if (s->slots[i].given_up)
			continue;
		if (!s->slots[i].ready)
			return;
		ready++;
	}
	if (ready)
		announce(s);
}

static void on_ready_record(struct supervisor *s, const struct worker_ready *r)
{
	struct slot *sl;

	if (r->index < 0 || r->index >= s->srv->cfg.workers)
		return;
	sl = &s->slots[r->index];
	if (sl->pid != r->pid)
		return; /* a record from a worker already reaped */
	sl->ready = 1;
	sl->tid = r->tid;
	memcpy(sl->cpu, r->cpu, sizeof(sl->cpu));
	sl->cpu[sizeof(sl->cpu) - 1] = '\0';
	if (!s->announced) {
		maybe_announce(s);
	} else {
		/* since_reap_ms: from the reap to the replacement serving (its
		 * listener bound, for variants that bind per worker). */
		emit_line(STDOUT_FILENO,
			  "{\"event\":\"respawned\",\"index\":%d,\"pid\":%d,\"tid\":%d,\"cpu\":\"%s\","
			  "\"since_reap_ms\":%.3f}",
			  r->index, (int)r->pid, (int)r->tid, sl->cpu,
			  (double)(now_ns() - sl->reaped_ns) / 1e6);
	}
}

static int respawns_last_hour(struct supervisor *s, int64_t now)
{
	int n = 0, cap = (int)(sizeof(s->respawn_ns) / sizeof(s->respawn_ns[0]));
	int count = s->nrespawns < cap ? s->nrespawns : cap;

	for (int k = 0; k < count; k++)
		if (now - s->respawn_ns[k] < HOUR_NS)
			n++;
	return n;
}

/* A worker died while the server serves: replace it or give up on it. */
static void after_death(struct supervisor *s, int i, int status, int64_t now)
{
	struct slot *sl = &s->slots[i];
	const char *why = NULL;
	int cap = (int)(sizeof(s->respawn_ns) / sizeof(s->respawn_ns[0]));

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		why = "exited 0 while serving; not a crash";
	if (!why) {
		sl->fast_deaths = now - sl->forked_ns < FAST_DEATH_NS ? sl->fast_deaths + 1 : 0;
		if (sl->fast_deaths >= FAST_DEATH_LIMIT)
			why = "5 deaths within 1 s of their fork";
		else if (respawns_last_hour(s, now) >= s->srv->cfg.respawn_hourly_limit)
			why = "respawn limit per hour reached";
	}
	if (!why) {
		s->respawn_ns[s->nrespawns % cap] = now;
		s->nrespawns++;
		if (spawn(s, i) == 0)
			return;
		why = "fork failed";
	}
	sl->given_up = 1;
	emit_line(STDOUT_FILENO, "{\"event\":\"gave_up\",\"index\":%d,\"reason\":\"%s\"}", i, why);
	fprintf(stderr, "acceptlab-server: giving up on worker %d: %s\n", i, why);
	if (s->srv->cfg.variant->worker_given_up)
		s->srv->cfg.variant->worker_given_up(s->srv, i);
	maybe_announce(s);
}

static int live_workers(const struct supervisor *s)
{
	int n = 0;

	for (int i = 0; i < s->srv->cfg.workers; i++)
		n += s->slots[i].pid != 0;
	return n;
}

static void reap(struct supervisor *s)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		int64_t now = now_ns();
		char how[32];
		int i;

		for (i = 0; i < s->srv->cfg.workers; i++)
			if (s->slots[i].pid == pid)
				break;
		if (i == s->srv->cfg.workers)
			continue;
		describe_status(status, how, sizeof(how));
		s->slots[i].pid = 0;
		s->slots[i].ready = 0;
		s->slots[i].reaped_ns = now;
		if (s->srv->cfg.variant->worker_reaped)
			s->srv->cfg.variant->worker_reaped(s->srv, i, pid);
		emit_line(STDOUT_FILENO, "{\"event\":\"reaped\",\"index\":%d,\"pid\":%d,\"status\":\"%s\"}",
			  i, (int)pid, how);
		if (!s->stopping)
			after_death(s, i, status, now);
	}
}

static void begin_stop(struct supervisor *s, int sig)
{
	if (s->stopping)
		return;
	s->stopping = 1;
	s->stop_deadline = now_ns() + (int64_t)s->srv->cfg.stop_grace_ms * 1000000;
	emit_line(STDOUT_FILENO, "{\"event\":\"stopping\",\"signal\":%d}", sig);
	for (int i = 0; i < s->srv->cfg.workers; i++) {
		if (!s->slots[i].pid)
			continue;
		kill(s->slots[i].pid, SIGTERM);
		kill(s->slots[i].pid, SIGCONT); /* a stopped worker must run to see it */
	}
}

int server_open(struct server *srv)
{
	char err[ERRLEN];

	srv->listen_fd = srv->port_claim_fd = -1;
	if (srv->cfg.variant->bind_per_worker) {
		srv->port_claim_fd = net_claim_reuseport(srv->cfg.host, srv->cfg.port, &srv->bound_port,
							 err, sizeof(err));
		if (srv->port_claim_fd < 0) {
			fprintf(stderr, "acceptlab-server: %s\n", err);
			return 2;
		}
	} else {
		srv->listen_fd = net_listen_tcp(srv->cfg.host, srv->cfg.port, 0, err, sizeof(err));
		if (srv->listen_fd < 0) {
			fprintf(stderr, "acceptlab-server: %s\n", err);
			return 2;
		}
		srv->bound_port = net_local_port(srv->listen_fd);
	}
	if (srv->cfg.variant->before_fork && srv->cfg.variant->before_fork(srv, err, sizeof(err)) < 0) {
		fprintf(stderr, "acceptlab-server: --variant %s: %s\n", srv->cfg.variant->name, err);
		return 2;
	}
	return 0;
}

int supervisor_run(struct server *srv)
{
	static struct supervisor s; /* large: keep it off the stack */
	sigset_t mask;
	int pipefd[2], rc;

	memset(&s, 0, sizeof(s));
	s.srv = srv;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	s.sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s.sigfd < 0 || pipe2(pipefd, O_CLOEXEC) < 0) {
		fprintf(stderr, "acceptlab-server: signalfd/pipe: %s\n", strerror(errno));
		return 1;
	}
	s.ready_rd = pipefd[0];
	s.ready_wr = pipefd[1];

	rc = server_open(srv);
	if (rc)
		return rc;

	for (int i = 0; i < srv->cfg.workers; i++) {
		if (spawn(&s, i) < 0) {
			fprintf(stderr, "acceptlab-server: fork: %s\n", strerror(errno));
			begin_stop(&s, 0);
			break;
		}
	}

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = s.sigfd, .events = POLLIN },
			{ .fd = s.ready_rd, .events = POLLIN },
		};
		int timeout = s.stopping ? 100 : -1;

		if (poll(pfd, 2, timeout) < 0 && errno != EINTR) {
			fprintf(stderr, "acceptlab-server: poll: %s\n", strerror(errno));
			begin_stop(&s, 0);
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(s.sigfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGCHLD)
					reap(&s);
				else
					begin_stop(&s, (int)si.ssi_signo);
			}
		}
		if (pfd[1].revents & POLLIN) {
			struct worker_ready r;
			if (read(s.ready_rd, &r, sizeof(r)) == sizeof(r))
				on_ready_record(&s, &r);
		}
		reap(&s); /* a SIGCHLD merged with one already read */
		if (!s.stopping && live_workers(&s) == 0) {
			fprintf(stderr, "acceptlab-server: no workers left\n");
			emit_line(STDOUT_FILENO, "{\"event\":\"stopped\",\"reason\":\"no workers left\"}");
			return 1;
		}
		if (s.stopping) {
			if (live_workers(&s) == 0)
				break;
			if (now_ns() > s.stop_deadline) {
				for (int i = 0; i < srv->cfg.workers; i++)
					if (s.slots[i].pid)
						kill(s.slots[i].pid, SIGKILL);
				s.stop_deadline = INT64_MAX; /* reap what the kill leaves */
			}
		}
	}
	emit_line(STDOUT_FILENO, "{\"event\":\"stopped\",\"reason\":\"signal\"}");
	return 0;
}
