/* supervisor.c: binds before fork, forks the workers, announces them, reaps
 * and respawns crashed ones within limits, replaces them all on SIGHUP (a
 * reload), and stops them all on SIGTERM.
 *
 * It reaps with WNOHANG alone (no WUNTRACED), so a SIGSTOPped worker is
 * neither a crash nor a respawn: it is simply not reported by waitpid.
 *
 * Workers and slots: index i is served by one worker at a time, whose
 * per-worker shared state lives in slot i or i + workers (server.h). A
 * respawn reuses the dead worker's slot; a reload starts the new worker in
 * the other one, so old and new never share a line, channel or sockarray
 * entry while both run.
 *
 * The reload (SIGHUP), one index at a time: start the new worker; once it
 * serves (its ready record), make it the index's worker and send the old
 * one RETIRE_SIGNAL (it stops taking connections and finishes the open
 * ones, see worker.c and conn.c); then the next index. A shared listener never closes,
 * so nothing queued is lost; per-worker listeners (reuseport) close with
 * the old worker and lose what is queued there unless --reuseport-migrate.
 * "reloaded" is printed once every old worker has exited. A SIGHUP during a
 * reload asks for one more after it. If a new worker dies before serving,
 * the old one keeps its index and the reload ends there (reload_failed, no
 * "reloaded"; the indexes already done keep their new workers).
 *
 * --spawn-workers: a worker is fork+exec of this binary with the same
 * arguments; what it inherits (listener, ready pipe, the variant's shared
 * descriptors) keeps its number across the exec, and ACCEPTLAB_SPAWNED
 * tells it which numbers (spawned_worker_run). */
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
#define SPAWN_ENV "ACCEPTLAB_SPAWNED"
#define MAX_SPAWN_FDS (3 * MAX_SLOTS + 8)

/* A worker process, by the slot it holds. */
struct proc {
	pid_t pid;          /* 0 when no process holds the slot */
	pid_t tid;
	int index;
	int64_t forked_ns;
	int ready;
	int retiring;       /* replaced by a reload: finishing, then exits */
	char cpu[64];
};

/* What the supervisor keeps per index. */
struct index_state {
	int slot;           /* the slot of the worker serving the index */
	int64_t reaped_ns;  /* when its last worker was reaped (0: never) */
	int fast_deaths;
	int given_up;
};

struct supervisor {
	struct server *srv;
	struct proc procs[MAX_SLOTS];
	struct index_state idx[MAX_WORKERS];
	int64_t respawn_ns[4096]; /* ring of recent respawn times, for the hourly limit */
	int nrespawns;
	int ready_rd, ready_wr;
	int sigfd;
	int announced;
	int stopping;
	int64_t stop_deadline;
	/* the reload */
	int reloading;
	int generation;
	int reload_index;     /* the index being replaced, or the last one done */
	int reload_new_slot;  /* the new worker not yet serving, or -1 */
	int reload_again;     /* a SIGHUP came during this reload */
	int replaced;
	int64_t reload_started_ns;
};

static void describe_status(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
}

static void keep_across_exec(int fd)
{
	int flags;

	if (fd >= 0 && (flags = fcntl(fd, F_GETFD)) >= 0)
		fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC);
}

/* --spawn-workers, in the forked child: exec this binary as worker index in
 * slot, handing it what a forked worker would have. Never returns. */
static void exec_worker(struct supervisor *s, int index, int slot)
{
	struct server *srv = s->srv;
	const struct accept_variant *v = srv->cfg.variant;
	int fds[MAX_SPAWN_FDS], n = 0;
	char env[64 + 12 * MAX_SPAWN_FDS];
	size_t off;

	if (v->spawn_fds)
		n = v->spawn_fds(srv, fds, MAX_SPAWN_FDS);
	keep_across_exec(srv->listen_fd);
	keep_across_exec(s->ready_wr);
	off = (size_t)snprintf(env, sizeof(env), "index=%d slot=%d listen=%d ready=%d port=%d fds=", index,
			       slot, srv->listen_fd, s->ready_wr, srv->bound_port);
	for (int k = 0; k < n && off < sizeof(env); k++) {
		keep_across_exec(fds[k]);
		off += (size_t)snprintf(env + off, sizeof(env) - off, "%s%d", k ? "," : "", fds[k]);
	}
	setenv(SPAWN_ENV, env, 1);
	execv("/proc/self/exe", srv->cfg.argv);
	fprintf(stderr, "acceptlab-server: worker %d: exec of /proc/self/exe: %s\n", index, strerror(errno));
	_exit(127);
}

/* In the worker process (forked, or exec'd by --spawn-workers): runs worker
 * index in slot; returns its exit status. */
static int run_worker(const struct server *srv, int index, int slot, int listen_fd, int ready_fd)
{
	struct worker w;

	memset(&w, 0, sizeof(w));
	w.srv = srv;
	w.index = index;
	w.slot = slot;
	w.pid = getpid();
	w.tid = (pid_t)syscall(SYS_gettid);
	w.listen_fd = listen_fd;
	w.ready_fd = ready_fd;
	return worker_run(&w);
}

/* Forks the worker for index i into slot. Returns 0, or -1 if fork failed. */
static int spawn(struct supervisor *s, int i, int slot)
{
	struct server *srv = s->srv;
	pid_t parent = getpid(), pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char err[ERRLEN];
		sigset_t none;

		/* Die with the supervisor: never leave a worker running alone
		 * (kept across --spawn-workers' exec). */
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
		/* SIGTERM and RETIRE_SIGNAL stay blocked: worker_run decides;
		 * SIGHUP stays blocked: reloads are the supervisor's. */
		pthread_sigmask(SIG_UNBLOCK, &none, NULL);

		if (worker_pin(srv, i, err, sizeof(err)) < 0) {
			fprintf(stderr, "acceptlab-server: worker %d: %s\n", i, err);
			_exit(1);
		}
		if (srv->cfg.spawn_workers)
			exec_worker(s, i, slot);
		_exit(run_worker(srv, i, slot, srv->listen_fd, s->ready_wr));
	}
	memset(&s->procs[slot], 0, sizeof(s->procs[slot]));
	s->procs[slot].pid = pid;
	s->procs[slot].index = i;
	s->procs[slot].forked_ns = now_ns();
	return 0;
}

/* The other slot of index i (the one a reload starts its new worker in). */
static int other_slot(const struct supervisor *s, int i)
{
	int w = s->srv->cfg.workers;
	return s->idx[i].slot == i ? i + w : i;
}

int spawned_worker_run(struct server *srv)
{
	const char *env = getenv(SPAWN_ENV);
	int index, slot, listen_fd, ready_fd, port, consumed = 0, fds[MAX_SPAWN_FDS], n = 0;
	char err[ERRLEN];
	const char *p;

	if (!env || sscanf(env, "index=%d slot=%d listen=%d ready=%d port=%d fds=%n", &index, &slot, &listen_fd,
			   &ready_fd, &port, &consumed) != 5 || !consumed ||
	    index < 0 || index >= srv->cfg.workers || slot < 0 || slot >= srv->nslots) {
		fprintf(stderr, "acceptlab-server: " SPAWN_ENV "=%s: not what the supervisor writes\n",
			env ? env : "");
		return 2;
	}
	for (p = env + consumed; *p && n < MAX_SPAWN_FDS;) {
		char *end;
		long fd = strtol(p, &end, 10);
		if (end == p || fd < 0 || (*end && *end != ',')) {
			fprintf(stderr, "acceptlab-server: " SPAWN_ENV ": bad descriptor list at %s\n", p);
			return 2;
		}
		fds[n++] = (int)fd;
		p = *end ? end + 1 : end;
	}
	unsetenv(SPAWN_ENV);
	srv->listen_fd = listen_fd;
	srv->port_claim_fd = -1;
	srv->bound_port = port;
	if (srv->cfg.variant->spawn_import &&
	    srv->cfg.variant->spawn_import(srv, fds, n, err, sizeof(err)) < 0) {
		fprintf(stderr, "acceptlab-server: worker %d: --variant %s: %s\n", index, srv->cfg.variant->name, err);
		return 1;
	}
	return run_worker(srv, index, slot, listen_fd, ready_fd);
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
		  "{\"event\":\"ready\",\"port\":%d,\"variant\":\"%s\",\"mode\":\"%s\",%s%s%s\"workers\":[%s]}",
		  srv->bound_port, srv->cfg.variant->name, srv->cfg.threads ? "threads" : "process",
		  srv->accounting ? "\"accounting\":\"" : "", srv->accounting ? srv->accounting : "",
		  srv->accounting ? "\"," : "", buf);
}

static void announce(struct supervisor *s)
{
	struct worker_ready recs[MAX_WORKERS];
	int n = 0;

	for (int i = 0; i < s->srv->cfg.workers; i++) {
		const struct proc *pr = &s->procs[s->idx[i].slot];
		if (s->idx[i].given_up)
			continue;
		recs[n].index = i;
		recs[n].slot = s->idx[i].slot;
		recs[n].pid = pr->pid;
		recs[n].tid = pr->tid;
		memcpy(recs[n].cpu, pr->cpu, sizeof(recs[n].cpu));
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
		if (s->idx[i].given_up)
			continue;
		if (!s->procs[s->idx[i].slot].ready)
			return;
		ready++;
	}
	if (ready)
		announce(s);
}

static void reload_next(struct supervisor *s);
static void begin_reload(struct supervisor *s);

/* The reload's new worker for index i serves: it becomes the index's worker
 * and the old one retires. */
static void reload_swap(struct supervisor *s, int i, int new_slot)
{
	struct proc *old = &s->procs[s->idx[i].slot], *nw = &s->procs[new_slot];
	pid_t old_pid = old->pid;

	s->idx[i].slot = new_slot;
	s->reload_new_slot = -1;
	if (old_pid) {
		old->retiring = 1;
		kill(old_pid, RETIRE_SIGNAL);
		kill(old_pid, SIGCONT); /* a stopped worker must run to see it */
	}
	s->replaced++;
	emit_line(STDOUT_FILENO,
		  "{\"event\":\"replaced\",\"index\":%d,\"old_pid\":%d,\"pid\":%d,\"tid\":%d,\"slot\":%d,"
		  "\"cpu\":\"%s\",\"since_reload_ms\":%.3f}",
		  i, (int)old_pid, (int)nw->pid, (int)nw->tid, new_slot, nw->cpu,
		  (double)(now_ns() - s->reload_started_ns) / 1e6);
	reload_next(s);
}

static void on_ready_record(struct supervisor *s, const struct worker_ready *r)
{
	struct proc *pr;

	if (r->slot < 0 || r->slot >= s->srv->nslots)
		return;
	pr = &s->procs[r->slot];
	if (pr->pid != r->pid || pr->index != r->index)
		return; /* a record from a worker already reaped */
	pr->ready = 1;
	pr->tid = r->tid;
	memcpy(pr->cpu, r->cpu, sizeof(pr->cpu));
	pr->cpu[sizeof(pr->cpu) - 1] = '\0';
	if (r->slot == s->reload_new_slot) {
		reload_swap(s, r->index, r->slot);
	} else if (!s->announced) {
		maybe_announce(s);
	} else {
		/* since_reap_ms: from the reap to the replacement serving (its
		 * listener bound, for variants that bind per worker). */
		emit_line(STDOUT_FILENO,
			  "{\"event\":\"respawned\",\"index\":%d,\"pid\":%d,\"tid\":%d,\"cpu\":\"%s\","
			  "\"since_reap_ms\":%.3f}",
			  r->index, (int)r->pid, (int)r->tid, pr->cpu,
			  (double)(now_ns() - s->idx[r->index].reaped_ns) / 1e6);
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

/* Index i's worker died while the server serves: replace it (same slot) or
 * give up on the index. */
static void after_death(struct supervisor *s, int i, int status, int64_t now, int64_t forked_ns)
{
	struct index_state *ix = &s->idx[i];
	const char *why = NULL;
	int cap = (int)(sizeof(s->respawn_ns) / sizeof(s->respawn_ns[0]));

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		why = "exited 0 while serving; not a crash";
	if (!why) {
		ix->fast_deaths = now - forked_ns < FAST_DEATH_NS ? ix->fast_deaths + 1 : 0;
		if (ix->fast_deaths >= FAST_DEATH_LIMIT)
			why = "5 deaths within 1 s of their fork";
		else if (respawns_last_hour(s, now) >= s->srv->cfg.respawn_hourly_limit)
			why = "respawn limit per hour reached";
	}
	if (!why) {
		s->respawn_ns[s->nrespawns % cap] = now;
		s->nrespawns++;
		if (spawn(s, i, ix->slot) == 0)
			return;
		why = "fork failed";
	}
	ix->given_up = 1;
	emit_line(STDOUT_FILENO, "{\"event\":\"gave_up\",\"index\":%d,\"reason\":\"%s\"}", i, why);
	fprintf(stderr, "acceptlab-server: giving up on worker %d: %s\n", i, why);
	if (s->srv->cfg.variant->worker_given_up)
		s->srv->cfg.variant->worker_given_up(s->srv, ix->slot);
	maybe_announce(s);
}

/* Processes running: all of them, or (current 1) only the indexes' own. */
static int live_workers(const struct supervisor *s, int current)
{
	int n = 0;

	for (int k = 0; k < s->srv->nslots; k++)
		n += s->procs[k].pid != 0 && !(current && s->procs[k].retiring);
	return n;
}

static int reload_done(const struct supervisor *s)
{
	for (int k = 0; k < s->srv->nslots; k++)
		if (s->procs[k].pid && s->procs[k].retiring)
			return 0;
	return 1;
}

/* Ends the reload once every index is done and every old worker exited. */
static void reload_maybe_finish(struct supervisor *s)
{
	if (!s->reloading || s->reload_new_slot >= 0 || s->reload_index < s->srv->cfg.workers ||
	    !reload_done(s))
		return;
	s->reloading = 0;
	emit_line(STDOUT_FILENO, "{\"event\":\"reloaded\",\"generation\":%d,\"replaced\":%d,\"ms\":%.3f}",
		  s->generation, s->replaced, (double)(now_ns() - s->reload_started_ns) / 1e6);
	if (s->reload_again) {
		s->reload_again = 0;
		begin_reload(s); /* the SIGHUP that came during this one */
	}
}

/* Starts the next index's new worker, if its other slot is free (an old
 * worker from the reload before may still be finishing there: the main
 * loop calls again). */
static void reload_next(struct supervisor *s)
{
	int w = s->srv->cfg.workers;

	if (!s->reloading || s->stopping || s->reload_new_slot >= 0)
		return;
	while (s->reload_index < w) {
		int i = s->reload_index + 1, slot;

		if (i >= w) {
			s->reload_index = w;
			break;
		}
		if (s->idx[i].given_up || !s->procs[s->idx[i].slot].pid) {
			s->reload_index = i; /* nothing serves it to replace */
			continue;
		}
		slot = other_slot(s, i);
		if (s->procs[slot].pid)
			return; /* still finishing from the reload before */
		s->reload_index = i;
		if (spawn(s, i, slot) < 0) {
			emit_line(STDOUT_FILENO, "{\"event\":\"reload_failed\",\"index\":%d,\"reason\":\"fork: %s\"}",
				  i, strerror(errno));
			s->reloading = 0; /* as for a new worker that dies before serving */
			s->reload_again = 0;
			return;
		}
		s->reload_new_slot = slot;
		return;
	}
	reload_maybe_finish(s);
}

static void begin_reload(struct supervisor *s)
{
	if (s->stopping)
		return;
	if (s->reloading || !s->announced) {
		s->reload_again = 1; /* after this one, or once all serve */
		return;
	}
	s->reloading = 1;
	s->generation++;
	s->reload_index = -1;
	s->reload_new_slot = -1;
	s->replaced = 0;
	s->reload_started_ns = now_ns();
	emit_line(STDOUT_FILENO, "{\"event\":\"reload\",\"generation\":%d}", s->generation);
	reload_next(s);
}

static void reap(struct supervisor *s)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		int64_t now = now_ns(), forked_ns;
		char how[32];
		int k, i, retired, was_new;

		for (k = 0; k < s->srv->nslots; k++)
			if (s->procs[k].pid == pid)
				break;
		if (k == s->srv->nslots)
			continue;
		describe_status(status, how, sizeof(how));
		i = s->procs[k].index;
		retired = s->procs[k].retiring;
		was_new = k == s->reload_new_slot;
		forked_ns = s->procs[k].forked_ns;
		memset(&s->procs[k], 0, sizeof(s->procs[k]));
		if (s->srv->cfg.variant->worker_reaped)
			s->srv->cfg.variant->worker_reaped(s->srv, k, pid);
		emit_line(STDOUT_FILENO,
			  "{\"event\":\"reaped\",\"index\":%d,\"pid\":%d,\"status\":\"%s\",\"retired\":%s}", i,
			  (int)pid, how, retired ? "true" : "false");
		if (s->stopping || retired)
			continue;
		if (was_new) {
			/* The old worker keeps the index; the reload ends here
			 * (a SIGHUP that came meanwhile is dropped: send another
			 * to try again). */
			s->reload_new_slot = -1;
			s->reloading = 0;
			s->reload_again = 0;
			emit_line(STDOUT_FILENO,
				  "{\"event\":\"reload_failed\",\"index\":%d,\"reason\":\"the new worker ended (%s) "
				  "before serving\"}", i, how);
			continue;
		}
		s->idx[i].reaped_ns = now;
		after_death(s, i, status, now, forked_ns);
	}
	reload_next(s);
	reload_maybe_finish(s);
}

static void begin_stop(struct supervisor *s, int sig)
{
	if (s->stopping)
		return;
	s->stopping = 1;
	s->stop_deadline = now_ns() + (int64_t)s->srv->cfg.stop_grace_ms * 1000000;
	emit_line(STDOUT_FILENO, "{\"event\":\"stopping\",\"signal\":%d}", sig);
	for (int k = 0; k < s->srv->nslots; k++) {
		if (!s->procs[k].pid)
			continue;
		kill(s->procs[k].pid, SIGTERM);
		kill(s->procs[k].pid, SIGCONT); /* a stopped worker must run to see it */
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
	for (int k = 0; k < MAX_KNOB_SETS && srv->cfg.variant->knob_sets[k]; k++) {
		const struct knob_set *ks = srv->cfg.variant->knob_sets[k];

		if (ks->setup && ks->setup(srv, err, sizeof(err)) < 0) {
			fprintf(stderr, "acceptlab-server: %s\n", err);
			return 1;
		}
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
	s.reload_new_slot = -1;

	/* SIGTERM and RETIRE_SIGNAL are blocked before any fork, so workers
	 * inherit them blocked: one sent before a worker's handler exists
	 * waits for it (worker_run unblocks them inside epoll_pwait). */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, RETIRE_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	sigdelset(&mask, RETIRE_SIGNAL);
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
		s.idx[i].slot = i;
		if (spawn(&s, i, i) < 0) {
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
		/* While stopping, or while a reload waits for a slot to free. */
		int timeout = s.stopping || s.reloading ? 100 : -1;

		if (poll(pfd, 2, timeout) < 0 && errno != EINTR) {
			fprintf(stderr, "acceptlab-server: poll: %s\n", strerror(errno));
			begin_stop(&s, 0);
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(s.sigfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGCHLD)
					reap(&s);
				else if (si.ssi_signo == SIGHUP)
					begin_reload(&s);
				else
					begin_stop(&s, (int)si.ssi_signo);
			}
		}
		if (pfd[1].revents & POLLIN) {
			struct worker_ready r;
			if (read(s.ready_rd, &r, sizeof(r)) == sizeof(r))
				on_ready_record(&s, &r);
			if (s.reload_again && !s.reloading && s.announced) {
				s.reload_again = 0;
				begin_reload(&s); /* a SIGHUP that came before all served */
			}
		}
		reap(&s); /* a SIGCHLD merged with one already read; a reload's next step */
		if (!s.stopping && live_workers(&s, 1) == 0) {
			fprintf(stderr, "acceptlab-server: no workers left\n");
			emit_line(STDOUT_FILENO, "{\"event\":\"stopped\",\"reason\":\"no workers left\"}");
			for (int k = 0; k < srv->nslots; k++)
				if (s.procs[k].pid)
					kill(s.procs[k].pid, SIGKILL);
			return 1;
		}
		if (s.stopping) {
			if (live_workers(&s, 0) == 0)
				break;
			if (now_ns() > s.stop_deadline) {
				for (int k = 0; k < srv->nslots; k++)
					if (s.procs[k].pid)
						kill(s.procs[k].pid, SIGKILL);
				s.stop_deadline = INT64_MAX; /* reap what the kill leaves */
			}
		}
	}
	emit_line(STDOUT_FILENO, "{\"event\":\"stopped\",\"reason\":\"signal\"}");
	return 0;
}
