/* trace_print.h: acceptlab-trace's two printers, both to stdout, as text or
 * as JSON lines: the per-worker table read from the stats map, and
 * --timeline's story of each connection. */
#ifndef ACCEPTLAB_TRACE_PRINT_H
#define ACCEPTLAB_TRACE_PRINT_H

#include <stddef.h>
#include <linux/types.h>

struct accept_event;

/* Prints a row per worker thread that did anything (by pid, then tid),
 * read from the threads' array slots_fd (nslots entries) and the hash
 * beside it, workers_fd, with the cycle each thread has open ended there
 * (trace_cycle_empty, trace_cycle_wasted), and a summary over
 * elapsed_s: a table, or JSON "worker" lines and a "summary" line. The
 * ESTABLISHED columns (established, est_cpu) only if timeline: without it
 * the kernel side does not see ESTABLISHED. */
void trace_print_workers(int slots_fd, __u32 nslots, int workers_fd, double elapsed_s, int json, int timeline);

/* Sorts events[0..nevents) by time, then prints a line per connection, from
 * its ESTABLISHED to the accept that took it: text, or JSON "conn" lines. */
void trace_print_timeline(struct accept_event *events, size_t nevents, int json);

#endif
