/* server.h: the harness's shared types: configuration, worker state and the
 * accept-variant interface every variants/ file implements.
 *
 * The harness (supervisor.c, threads.c, worker.c, accept.c, conn.c, app.c
 * and the connection sets) owns sockets, connections and HTTP; a variant
 * owns only the question this toolkit measures: how a worker learns of new
 * connections and which of them it accepts, and the knobs that tune it
 * (struct knob).
 */
#ifndef ACCEPTLAB_SERVER_H
#define ACCEPTLAB_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/types.h>

#define MAX_WORKERS 64
/* Slots: where a worker keeps its per-worker shared state (a variant's line
 * in a shared page, its channel, its sockarray entry). In process mode each
 * index has two, so a reload can start index i's new worker in the slot the
 * old one does not use while the old one still serves: index i uses slot i
 * or i + workers. In threads mode slot = index. */
#define MAX_SLOTS (2 * MAX_WORKERS)
#define ERRLEN 256

struct worker;
struct server;
struct server_config;
struct conn_set;

/* A command-line option a variant reads (a knob). main builds its getopt
 * table from its own options and every variant's knobs, prints each knob's
 * help where the variants' options go, and refuses one that the chosen
 * variant does not read. */
struct knob {
	const char *name; /* the option as written, "--accept-mutex-delay" */
	const char *arg;  /* its value's name in the synopsis ("MS"), or NULL: it takes none */
	const char *help; /* its --help lines, as printed */
	/* A knob with a value: validates it and stores it in the variant's
	 * configuration (static in its file: a --spawn-workers worker parses
	 * the same command line again); 0, or -1 with a one-line message
	 * naming the option in err. It runs as the option is read, before the
	 * variant is known, so it only stores. */
	int (*parse)(const char *value, char *err, size_t errlen);
	/* A knob without one (parse NULL): set to 1 when given. */
	int *flag;
};

/* Knobs declared together, in the file of what reads them, and read
 * together: a variant names the sets it reads, and two variants may name
 * one set. */
struct knob_set {
	const struct knob *knobs; /* ended by one with a NULL name */
	/* Optional, once the command line is read, when the variant reads the
	 * set: refuses a combination its parse could not see (the mode);
	 * 0, or -1 with a one-line message in err. */
	int (*check)(const struct server_config *cfg, char *err, size_t errlen);
	/* Optional, when the variant reads the set, in server_open after the
	 * variant's before_fork: what the knobs ask of the harness; 0, or -1
	 * + err (exit 1). */
	int (*setup)(struct server *srv, char *err, size_t errlen);
};
#define MAX_KNOB_SETS 4 /* per variant */

/* One accept variant. Hooks may be NULL where marked optional. Those with an
 * err buffer return 0 on success or -1 with a one-line reason in err.
 *
 * A worker runs worker_start, then serving, then reports ready, then loops.
 * A loop pass runs: pass_begin (may cap the wait) -> epoll_wait ->
 * the accept phase (listener_readable, variant_fd_ready) -> after_accepts ->
 * the connection phase (reads, writes, conn_closed) -> pass_end. */
struct accept_variant {
	const char *name;      /* the --variant value */
	const char *mechanism; /* one line for --help */
	/* 0: the supervisor binds one listener before fork, shared by all.
	 * 1: each worker binds its own (SO_REUSEPORT) in worker_start; the
	 *    supervisor only claims the port (see supervisor.c). */
	int bind_per_worker;
	/* The knobs it reads; main refuses the others. */
	const struct knob_set *knob_sets[MAX_KNOB_SETS];
	/* The modes it runs in (MODE_*); 0 means both. */
	unsigned modes;
	/* 1: every connection gets one answer, which says Connection: close
	 * (a worker that serves one connection at a time cannot keep one
	 * open: blocking). 0: HTTP/1.1 keep-alive. --list-variants says it. */
	int one_request;

	/* Optional, in the supervisor before any fork: shared state. */
	int (*before_fork)(struct server *srv, char *err, size_t errlen);
	/* In the worker, after its epoll exists: register for new connections. */
	int (*worker_start)(struct worker *w, char *err, size_t errlen);
	/* Optional, once: the worker's loop runs next (called before it reports
	 * ready, except under the ACCEPTLAB_TEST_ARM_GAP_MS hold). */
	void (*serving)(struct worker *w);
	/* Optional, before every epoll_wait: returns the longest the worker may
	 * wait in ms, or -1 for no cap of its own. */
	int (*pass_begin)(struct worker *w);
	/* Optional, as soon as epoll_wait returns: the pass has begun. */
	void (*pass_woke)(struct worker *w);
	/* The listener (epoll tag LISTENER_TAG) is readable: accept and admit.
	 * NULL only for a variant that never puts the listener in an epoll
	 * (blocking, which accepts in pass_begin with worker_accept_blocking). */
	void (*listener_readable)(struct worker *w);
	/* Optional: a fd the variant registered with VARIANT_TAG is readable. */
	void (*variant_fd_ready)(struct worker *w);
	/* Optional, after the accept phase, before connections are served. */
	void (*after_accepts)(struct worker *w);
	/* Optional, whenever one of the worker's connections closes. */
	void (*conn_closed)(struct worker *w);
	/* Optional, at the end of every loop pass. */
	void (*pass_end)(struct worker *w);
	/* Optional, once, when the worker stops taking new connections. */
	void (*leaving)(struct worker *w);
	/* Optional, in the supervisor, when it reaps the worker (pid) that held
	 * slot, before deciding on a respawn: clear what it left behind. */
	void (*worker_reaped)(struct server *srv, int slot, pid_t pid);
	/* Optional, in the supervisor, when it gives up on the index whose
	 * last worker held slot (no respawn). */
	void (*worker_given_up)(struct server *srv, int slot);
	/* Optional, --spawn-workers: the descriptors a worker needs beyond the
	 * listener (shared pages as memfds, channels, BPF maps), in an order
	 * spawn_import reads back: returns the count written to fds (<= max).
	 * They reach the exec'd worker under the same numbers. */
	int (*spawn_fds)(const struct server *srv, int *fds, int max);
	/* Optional, --spawn-workers, in the exec'd worker before worker_start:
	 * rebuilds the state before_fork made (srv->vshared) from those
	 * descriptors; 0, or -1 + err. */
	int (*spawn_import)(struct server *srv, const int *fds, int n, char *err, size_t errlen);
	/* Optional: the variant's shared state as one JSON object, for
	 * GET /variant. Returns the length written (< len). */
	int (*describe)(struct worker *w, char *buf, size_t len);
};

#define MODE_PROCESS 1u /* --workers N: N processes */
#define MODE_THREADS 2u /* --threads N: one process, N threads */

/* Everything the command line sets; read-only once workers fork. */
struct server_config {
	const struct accept_variant *variant;
	int workers;               /* processes, or threads with --threads */
	int threads;               /* 1: threads mode (one process, pthreads) */
	const char *host;
	int port;
	int pin_cpus[MAX_WORKERS]; /* worker i runs on pin_cpus[i % npin] */
	int npin;
	int idle_timeout_s;        /* keep-alive connections idle this long are closed */
	int header_timeout_s;      /* a request head incomplete this long (from its first byte) closes */
	int respawn_hourly_limit;  /* respawns allowed per hour (all indexes); default 10 x workers */
	int stop_grace_ms;         /* SIGTERM: how long workers may finish before SIGKILL */
	/* (A variant's knobs live in its own file: struct knob.) */
	int spawn_workers;         /* process mode: workers are fork+exec of this binary */
	char **argv;               /* the command line, for --spawn-workers' exec */
};

struct server {
	struct server_config cfg;
	int listen_fd;  /* the shared listener bound before fork, or -1 */
	int port_claim_fd; /* bind_per_worker: the socket holding the port, or -1 */
	int bound_port; /* the port actually bound (for --port 0) */
	int nslots;     /* slots in use: 2 x workers in process mode, workers in threads mode */
	void *vshared;  /* a variant's state made before fork (shared pages, BPF maps) */
	/* The balancing variants' load accounting (load.h), "kernel" or
	 * "user", set by before_fork; NULL for the others. The ready line
	 * says it. */
	const char *accounting;
	/* How workers hold their connections (conn.h); NULL: each in its own
	 * epoll instance. A knob's setup may choose another (--shared-epoll). */
	const struct conn_set *conn_set;
};

/* epoll tag for the listener; connections are tagged with their fd (>= 0). */
#define LISTENER_TAG UINT64_MAX
/* epoll tag for a fd a variant registers for itself (variant_fd_ready). */
#define VARIANT_TAG (UINT64_MAX - 1)

struct conn;

struct worker {
	const struct server *srv;
	int index;
	int slot;            /* where its per-worker shared state lives (MAX_SLOTS) */
	pid_t pid;
	pid_t tid;
	int epfd;
	int listen_fd;
	struct conn **conns; /* indexed by fd */
	int nconns_cap;
	int open_conns;
	uint64_t accepted;   /* connections this worker accepted */
	uint64_t admitted;   /* connections this worker served (accepted or handed to it) */
	uint64_t requests;   /* requests answered (any status) */
	uint64_t epoll_returns; /* epoll_pwait returns that delivered events: with
				 * requests, how many requests each wakeup served */
	uint64_t accept_eagain; /* accept() calls that found the queue empty */
	uint64_t accept_errors;
	int stopping;        /* SIGTERM seen: no new connections, finish what is in flight */
	int retiring;        /* stopping for a reload (SIGUSR2): idle connections are kept
			      * until their next request (answered with close) or until
			      * idle RETIRE_IDLE_MS, so a keep-alive client loses nothing */
	int listener_watched; /* the listener is in the epoll set */
	uint32_t listener_events; /* the events it was last added with */
	int64_t accept_paused_until; /* accept() failed for want of fds: rest until then (ns), or 0 */
	int rest_took_listener; /* that rest took the listener out: put it back after */
	int ready_fd;        /* where the worker reports that it serves, or -1 */
	/* Connections admitted in this pass whose first read waits until the
	 * accept phase is over (conn.c: conn_admit_flush), so a storm of new
	 * connections cannot keep the worker accepting and serving them while
	 * its open connections wait. */
	int *fresh;          /* their fds */
	int nfresh, fresh_cap;
	void *vstate;        /* the variant's per-worker state */
	/* Optional, set by the variant (in memory its siblings map): the
	 * harness keeps it around every request it answers (fdpass's busy
	 * rule reads it). */
	struct handler_clock *handler_clock;
	/* The loop's clock (now_ns), read once per pass of the loop after its
	 * wait and again after a handler that waited (/work, /sleep): what a
	 * connection's idle time is measured from, without a clock read per
	 * read and per write. */
	int64_t clock_ns;
	/* Closed connections' memory kept for the next ones (conn.c). */
	struct conn *spare;
	int nspare;
	/* The harness's: how its connections are registered (conn.h), set by
	 * worker_run before anything else: srv->conn_set, or the default. */
	const struct conn_set *conn_set;
};

/* Whether a worker is inside a request handler, and since when, so that a
 * sibling can tell one stuck in a slow view from one merely late to run.
 * Every field is read and written with relaxed __atomic operations. */
struct handler_clock {
	int64_t since;      /* the harness: when the handler now running began (now_ns); 0 between handlers */
	int64_t last_ns;    /* the harness: how long the last handler took (wall clock) */
	int64_t judged;     /* a sibling: the since of a handler it judged stuck (a slow view) */
	int64_t slow_until; /* the harness, when a judged handler ends: until when the worker counts as
			     * slow (as long again as that handler took: what it takes next waits behind
			     * its next slow view) */
};

/* What a worker writes to the supervisor's ready pipe once it serves; one
 * write below PIPE_BUF, so records from several workers never mix. */
struct worker_ready {
	int index;
	int slot;
	pid_t pid;
	pid_t tid;
	char cpu[64]; /* the CPUs it may run on, "0" or "0-1" */
};

/* worker.c: the loop. */

/* Runs worker w until it is told to stop; returns the process exit status. */
int worker_run(struct worker *w);
/* Pins the calling thread to worker i's CPU (--pin-workers); 0, or -1 + err. */
int worker_pin(const struct server *srv, int i, char *err, size_t errlen);

/* conn.c: the connections. */

/* The accept path's tail: takes ownership of connected socket fd. Its
 * first read runs once the accept phase is over (after after_accepts), so
 * call it from pass_woke, the accept phase, after_accepts or leaving.
 * Returns 0, or -1 if it could not be admitted (out of memory): fd is then
 * closed and conn_closed is never called for it. */
int worker_admit(struct worker *w, int fd);

/* accept.c: the accept path's helpers for variants. */

/* Registers the listener in w's epoll with the given events (EPOLLIN plus
 * flags); 0, or -1 with the reason in err. */
int worker_watch_listener(struct worker *w, uint32_t events, char *err, size_t errlen);

/* What one accept4() on the listener came to. */
enum accept_result {
	ACCEPT_OK,        /* a connection */
	ACCEPT_AGAIN,     /* the queue is empty (EAGAIN) */
	ACCEPT_TRANSIENT, /* a connection gone before it was taken (ECONNABORTED):
			   * worker_accept tries again, never returns it */
	ACCEPT_INTERRUPTED, /* a signal (EINTR): only an accept() that waits, on a
			     * blocking listener, is interrupted; returned, so that
			     * the loop sees the signal (worker_accept_blocking) */
	ACCEPT_NO_FDS,    /* out of descriptors or kernel memory (EMFILE, ENFILE, ENOBUFS, ENOMEM) */
	ACCEPT_HARD,      /* any other error */
};

/* One accept4() on the listener (retried while transient), counted in w's
 * statistics (accepted, accept_eagain, accept_errors) and nothing else:
 * returns its class, with the connected fd in *fd for ACCEPT_OK (peer
 * address in *peer, which may be NULL). */
enum accept_result worker_accept(struct worker *w, struct sockaddr_in *peer, int *fd);

/* worker_accept, and after ACCEPT_NO_FDS the harness's rest: the listener
 * leaves w's epoll for a while. Returns the connected fd, or -1 when the
 * queue is empty or accept failed. */
int worker_accept_one(struct worker *w, struct sockaddr_in *peer);

/* For a variant whose listener is blocking (no O_NONBLOCK) and in no epoll
 * (blocking): worker_accept_one waiting in accept() with the stop signals
 * deliverable, as they are inside epoll_pwait, so that a stop or a reload's
 * retirement interrupts it (EINTR); none is waited for once one has been
 * seen. Call it from pass_begin (the loop's stop check follows the wait).
 * A signal that comes in the instant between that check and accept()
 * entering the kernel is seen only when accept() returns: the variant
 * bounds its wait (SO_RCVTIMEO on the listener). Returns the connected fd
 * (non-blocking, for worker_admit), or -1: interrupted, timed out, a stop
 * seen, or accept failed (counted as worker_accept_one counts it). In
 * worker.c, which owns the signals. */
int worker_accept_blocking(struct worker *w);

/* Accepts up to max connections (max < 0: until EAGAIN) with
 * worker_accept_one and admits each. Returns how many were accepted. */
int worker_accept_batch(struct worker *w, int max);

/* bind_per_worker variants: binds and listens on the server's port with
 * SO_REUSEPORT, joining the group, and sets w->listen_fd. 0 or -1 + err. */
int worker_bind_own_listener(struct worker *w, char *err, size_t errlen);

/* Adds (on = 1) or removes the listener from w's epoll, tracking whether it
 * is there; events as for worker_watch_listener. 0 or -1 with errno (EMFILE
 * for an add while accepting rests after running out of descriptors). */
int worker_listener_enable(struct worker *w, uint32_t events, int on);

/* variants.c: the registry. */
const struct accept_variant *variant_find(const char *name);
/* Writes "bare, exclusive, ..." into buf. */
void variant_names(char *buf, size_t len);
extern const struct accept_variant *const accept_variants[];
/* The knob sets in --help order; main lists any set a variant reads that
 * is missing here after them. */
extern const struct knob_set *const knob_sets_help_order[];

/* shared_epoll.c: --shared-epoll (bare, threads mode), every thread
 * waiting in one epoll instance. */
extern const struct knob_set shared_epoll_knobs;

/* supervisor.c: process mode. */
int supervisor_run(struct server *srv);
/* --spawn-workers: in a worker exec'd by the supervisor (ACCEPTLAB_SPAWNED
 * set): rebuilds the inherited state and runs the worker; the exit status. */
int spawned_worker_run(struct server *srv);
/* The signal that retires a worker for a reload (process mode). */
#define RETIRE_SIGNAL SIGUSR2
/* Binds the shared listener (or claims the port for bind_per_worker
 * variants), runs the variant's before_fork (0, or the exit status 2 after
 * printing why), then the setup of each knob set it reads (exit status 1).
 * Both runners start with it. */
int server_open(struct server *srv);
/* Prints the one ready line for the n workers in recs. */
void announce_ready(const struct server *srv, const struct worker_ready *recs, int n);

/* threads.c: threads mode. */
int threads_run(struct server *srv);

/* util.c */
/* Reads an environment variable (a test switch, ACCEPTLAB_TEST_*, or a
 * variant's knob such as ACCEPTLAB_ACCEPT_SHARE; main.c lists them all) as
 * an integer in [lo, hi]: returns def when unset; exits 2 naming the
 * variable when malformed. */
long env_long(const char *name, long def, long lo, long hi);
int64_t now_ns(void);
/* Sleeps ms milliseconds, however many signals arrive meanwhile. */
void sleep_ms(int ms);
/* Writes one line to fd with a single write(2), so lines from several
 * processes sharing stdout never interleave. */
void emit_line(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The value of knob name given as s: a decimal integer in [lo, hi] into
 * *v, 0; or -1 with the message naming both in err. */
int knob_parse_int(const char *name, const char *s, long lo, long hi, int *v, char *err, size_t errlen);
/* Parses "0,1,3-5" into cpus[]; returns the count or -1 with a reason. */
int parse_cpu_list(const char *s, int *cpus, int max, char *err, size_t errlen);
/* Formats the calling thread's allowed CPUs as "0-1" or "0,2". */
void format_affinity(char *buf, size_t len);

#endif
