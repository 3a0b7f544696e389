/* server.h: the harness's shared types: configuration, worker state and the
 * accept-variant interface every variants/ file implements.
 *
 * The harness (supervisor.c, worker.c) owns sockets, connections and HTTP;
 * a variant owns only the question this toolkit measures: how a worker learns
 * of new connections and which of them it accepts.
 */
#ifndef ACCEPTLAB_SERVER_H
#define ACCEPTLAB_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MAX_WORKERS 64
#define ERRLEN 256

struct worker;
struct server;

/* One accept variant. Hooks may be NULL where marked optional. Each returns
 * 0 on success or -1 with a one-line reason in err. */
struct accept_variant {
	const char *name;      /* the --variant value */
	const char *mechanism; /* one line for --help */

	/* Optional, in the supervisor before any fork: shared state, listeners. */
	int (*before_fork)(struct server *srv, char *err, size_t errlen);
	/* In the worker, after its epoll exists: register for new connections. */
	int (*worker_start)(struct worker *w, char *err, size_t errlen);
	/* The listener (epoll tag LISTENER_TAG) is readable: accept and admit. */
	void (*listener_readable)(struct worker *w);
	/* Optional, at the end of every loop pass. */
	void (*pass_end)(struct worker *w);
	/* Optional, once, when the worker stops taking new connections. */
	void (*leaving)(struct worker *w);
};

/* Everything the command line sets; read-only once workers fork. */
struct server_config {
	const struct accept_variant *variant;
	int workers;
	const char *host;
	int port;
	int pin_cpus[MAX_WORKERS]; /* worker i runs on pin_cpus[i % npin] */
	int npin;
	int idle_timeout_s;        /* keep-alive connections idle this long are closed */
	int respawn_hourly_limit;  /* respawns allowed per hour (all indexes); default 10 x workers */
	int stop_grace_ms;         /* SIGTERM: how long workers may finish before SIGKILL */
};

struct server {
	struct server_config cfg;
	int listen_fd;  /* the shared listener, bound before fork */
	int bound_port; /* the port actually bound (for --port 0) */
};

/* epoll tag for the listener; connections are tagged with their fd (>= 0). */
#define LISTENER_TAG UINT64_MAX

struct conn;

struct worker {
	const struct server *srv;
	int index;
	pid_t pid;
	pid_t tid;
	int epfd;
	int listen_fd;
	struct conn **conns; /* indexed by fd */
	int nconns_cap;
	int open_conns;
	uint64_t accepted;   /* connections this worker accepted */
	uint64_t admitted;   /* connections this worker served (accepted or handed to it) */
	uint64_t requests;
	uint64_t accept_eagain; /* accept() calls that found the queue empty */
	uint64_t accept_errors;
	int stopping;        /* SIGTERM seen: no new connections, finish what is in flight */
	int ready_fd;        /* where the worker reports that it serves, or -1 */
};

/* What a worker writes to the supervisor's ready pipe once it serves; one
 * write below PIPE_BUF, so records from several workers never mix. */
struct worker_ready {
	int index;
	pid_t pid;
	pid_t tid;
	char cpu[64]; /* the CPUs it may run on, "0" or "0-1" */
};

/* worker.c: the loop and the accept path's helpers for variants. */

/* Runs worker w until it is told to stop; returns the process exit status. */
int worker_run(struct worker *w);

/* Registers the listener in w's epoll with the given events (EPOLLIN plus
 * flags); 0, or -1 with the reason in err. */
int worker_watch_listener(struct worker *w, uint32_t events, char *err, size_t errlen);

/* Accepts up to max connections (max < 0: until EAGAIN) and admits each.
 * Returns how many were accepted. */
int worker_accept_batch(struct worker *w, int max);

/* The accept path's tail: takes ownership of connected socket fd. */
void worker_admit(struct worker *w, int fd);

/* variants.c: the registry. */
const struct accept_variant *variant_find(const char *name);
/* Writes "bare, exclusive, ..." into buf. */
void variant_names(char *buf, size_t len);
extern const struct accept_variant *const accept_variants[];

/* supervisor.c */
int supervisor_run(struct server *srv);

/* util.c */
int64_t now_ns(void);
/* Writes one line to fd with a single write(2), so lines from several
 * processes sharing stdout never interleave. */
void emit_line(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parses "0,1,3-5" into cpus[]; returns the count or -1 with a reason. */
int parse_cpu_list(const char *s, int *cpus, int max, char *err, size_t errlen);
/* Formats the calling thread's allowed CPUs as "0-1" or "0,2". */
void format_affinity(char *buf, size_t len);

#endif
