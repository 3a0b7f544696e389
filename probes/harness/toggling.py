"""toggling: what a watcher costs a server, measured on one server under
one continuous load, the watcher switched off and on in short windows (the
trace_overhead study's method).

A watcher's programs run for every task that hits their tracepoints (a
syscall tracepoint puts every task's syscalls on the traced path), so it
cannot be paired with a second server at the same moment, as the cost
study pairs its arms: the partner would pay part of it too. Runs of a
watched and an unwatched server one after another, seconds apart, differ
by what the host does over those seconds, and on this VM that is more
than the few per cent a watcher costs. So the watcher stays loaded for
the whole run, and is paused (its programs detached: SIGUSR1) and resumed
(attached again: SIGUSR2) every WINDOW_S, each switch acknowledged by the
watcher; after each, GAP_S with nothing measured, then a window: the
server's CPU time (every thread of its process tree, the scheduler's own
count) and the bytes its processes read (rchar: the requests, which wrk
sends alike, so bytes count requests) over it. Off windows open and close
the run, so every on window sits between two off windows; its ratio is
its CPU per byte over the mean of theirs (a drift over the three windows,
on a line, cancels), and the run's ratio is the median of those pairs (a
window the host stalled moves one pair, not the run). A sham run (no
watcher, the same windows, nothing switched) is the A/A pair: what the
method resolves."""

import os
import signal
import statistics
import time

from probes.harness.cpu import process_tree, task_counts

WINDOW_S = 0.5   # one window, off or on
GAP_S = 0.1      # after each switch's acknowledgement, before its window: what the switch left settles
LEAD_S = 1.0     # after the watcher's first pause, before the first window
PAIRS = 10       # on windows in a run (the campaign's; --quick: QUICK_PAIRS)
QUICK_PAIRS = 3


def read_bytes(pids):
    """The bytes read so far (/proc/PID/io rchar: every read of the process,
    its threads' included) by pids, summed; a process gone is left out.
    Needs the right to read the processes' io (root, or their owner)."""
    total = 0
    for p in pids:
        try:
            with open("/proc/%d/io" % p) as f:
                for line in f:
                    if line.startswith("rchar:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total


def run_seconds(pairs):
    """How long a run of pairs on windows takes at most: the lead, 2 pairs + 1
    windows with their gaps, and a second per switch for its
    acknowledgement (a bound, for wrk's duration: the run stops wrk once
    its windows are done)."""
    return LEAD_S + (2 * pairs + 1) * (WINDOW_S + GAP_S + 1.0)


def windows(root_pid, switch, pairs):
    """The run's windows, 2 pairs + 1 of them, off first and last:
    [{"on": bool, "cpu_ns": the server's CPU time, "bytes": what it read,
    "s": the window's length}, ...]. switch(on) pauses (False) or resumes
    (True) the watcher and returns once it is done (a sham: does nothing);
    the watcher must be paused when this is called. The server's process
    tree is read once, at the start (the studies that use this start and
    stop no process inside)."""
    pids = process_tree(root_pid)
    time.sleep(LEAD_S)
    out = []
    for i in range(2 * pairs + 1):
        on = i % 2 == 1
        if i:
            switch(on)
        time.sleep(GAP_S)
        t0, c0, b0 = time.monotonic(), task_counts(pids)["cpu_ns"], read_bytes(pids)
        time.sleep(WINDOW_S)
        t1, c1, b1 = time.monotonic(), task_counts(pids)["cpu_ns"], read_bytes(pids)
        out.append({"on": on, "cpu_ns": c1 - c0, "bytes": b1 - b0, "s": round(t1 - t0, 4)})
    return out  # the last window off: the watcher is paused, as it was at the start


def pair_ratios(wins):
    """Each on window's CPU per byte over the mean of its two off windows'
    (the windows before and after it); None for a pair where a window read
    no bytes."""
    def per_byte(w):
        return w["cpu_ns"] / w["bytes"] if w["bytes"] > 0 else None
    out = []
    for i, w in enumerate(wins):
        if not w["on"] or i == 0 or i == len(wins) - 1:
            continue
        on, before, after = per_byte(w), per_byte(wins[i - 1]), per_byte(wins[i + 1])
        out.append(round(on / ((before + after) / 2), 5) if None not in (on, before, after) else None)
    return out


def run_ratio(wins):
    """The run's ratio, on over off: the median of its pairs' ratios (None
    without any)."""
    ratios = [r for r in pair_ratios(wins) if r is not None]
    return round(statistics.median(ratios), 5) if ratios else None


def per_request_us(wins, on, bytes_per_request):
    """The server's CPU µs per request over the on (or off) windows, the
    requests counted as bytes read over bytes_per_request (None without)."""
    ns = sum(w["cpu_ns"] for w in wins if w["on"] == on)
    read = sum(w["bytes"] for w in wins if w["on"] == on)
    if not read or not bytes_per_request:
        return None
    return round(ns / 1000.0 / (read / bytes_per_request), 4)


def sham(on):
    """The A/A run's switch: nothing to pause or resume."""


def signal_switch(watcher):
    """A switch for a watcher with pause() and resume() (probes/harness/tracer.py)."""
    return lambda on: watcher.resume() if on else watcher.pause()


def interrupt(proc):
    """SIGINT to a process (wrk: it stops, and prints what it measured)."""
    try:
        os.kill(proc.pid, signal.SIGINT)
    except ProcessLookupError:
        pass
