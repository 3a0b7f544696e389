/* stop_winner.c: --stop-winner (see stop_winner.h). A SIGSTOP is only sent,
 * not done, when kill() returns: the worker is stopped once /proc/PID/stat
 * says state T, so the rerun waits for that (up to STOP_CONFIRM_MS). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "stop_winner.h"
#include "timing.h"

#define STOP_CONFIRM_MS 2000 /* how long a SIGSTOP may take to show in /proc */

/* The worker we SIGSTOPped: always SIGCONT it on the way out. */
static volatile sig_atomic_t stopped;

/* The state letter of /proc/PID/stat (R, S, T, ...), or 0 if unreadable. */
static int proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

pid_t stop_winner_stop(const struct tally *total, char *msg, size_t len)
{
	const struct wstat *win = NULL;
	int64_t until;

	for (int i = 0; i < total->n; i++)
		if (!win || total->w[i].conns > win->conns)
			win = &total->w[i];
	if (!win || win->conns == 0 || win->pid <= 0) {
		snprintf(msg, len, "no winner with a known pid");
		return -1;
	}
	stopped = win->pid;
	if (kill(win->pid, SIGSTOP) < 0) {
		snprintf(msg, len, "kill(%d, SIGSTOP): %s", win->pid, strerror(errno));
		stopped = 0;
		return -1;
	}
	until = now_ns() + (int64_t)STOP_CONFIRM_MS * 1000000;
	while (proc_state(win->pid) != 'T' && now_ns() < until)
		sleep_ms(1);
	if (proc_state(win->pid) != 'T') {
		snprintf(msg, len, "SIGSTOP did not take on %d", win->pid);
		stop_winner_continue();
		return -1;
	}
	return win->pid;
}

pid_t stop_winner_pid(void)
{
	return stopped;
}

int stop_winner_verdict(const struct tally *again, char *msg, size_t len)
{
	size_t off = 0;
	int failed = 0;

	msg[0] = '\0';
	for (int i = 0; i < again->n; i++) {
		if (again->w[i].pid != stopped || again->w[i].conns == 0)
			continue;
		if (off < len)
			off += (size_t)snprintf(msg + off, len - off, "the stopped worker %d answered %ld connections\n",
						(int)stopped, again->w[i].conns);
		failed = 1;
	}
	if (again->unanswered) {
		if (off < len)
			snprintf(msg + off, len - off, "with worker %d stopped, %ld connections went unanswered\n",
				 (int)stopped, again->unanswered);
		failed = 1;
	}
	return failed;
}

void stop_winner_continue(void)
{
	if (stopped > 0)
		kill(stopped, SIGCONT);
	stopped = 0;
}
