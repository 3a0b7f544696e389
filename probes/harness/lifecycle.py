"""lifecycle: how everything the harness starts is stopped, whatever ends the
run. Every child started registers how to stop it in one clean-up registry
(register, inside registering()) and unregisters once stopped (forget):
stop_all() stops whatever is still running, the newest first. The campaign
calls it when Ctrl-C or SIGTERM ends it (its handler, on_signal, holds the
signal back while a child is being started and registered, so none escapes
the registry) and after every step that failed; the gate and the soak call
it when they end. Nothing they started outlives them, whichever study
started it.

Also what every part of the harness raises or says: StepFailed (a step
that could not be measured), die (one line, then exit), is_root, tail.
This module imports nothing else of the harness; the others import it."""

import contextlib
import os
import signal
import sys


class StepFailed(Exception):
    """A step could not be measured; the reason goes into the results (rows:
    what the step did record before it failed, written instead of a bare
    error row)."""

    def __init__(self, message, rows=None):
        super().__init__(message)
        self.rows = rows


def die(msg, code=2, prog="campaign"):
    """One line on stderr naming the program, then exit (2: bad usage)."""
    print(prog + ": " + msg, file=sys.stderr)
    sys.exit(code)


def is_root():
    return os.geteuid() == 0


def tail(path, n=200):
    try:
        with open(path) as f:
            return f.read().strip().replace("\n", " | ")[-n:] or "(no stderr)"
    except OSError:
        return "(no stderr)"


# ---- the clean-up registry ---------------------------------------------------

_running = []  # [(thing, stop)]: started and not yet stopped, oldest first
_held = 0      # > 0 while a child is being started and registered
_pending = []  # SIGINT or SIGTERM that arrived meanwhile


def on_signal(signum, frame):
    """SIGINT raises KeyboardInterrupt, SIGTERM SystemExit(130), where the
    main thread is; while a child is being started (registering()), not
    until it is registered, so a child an interrupt lands beside is still
    in the registry for stop_all."""
    if _held:
        _pending.append(signum)
        return
    _raise_for(signum)


def _raise_for(signum):
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    sys.exit(130)


def handle_signals():
    """Installs on_signal for SIGINT and SIGTERM (the campaign's)."""
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)


@contextlib.contextmanager
def registering():
    """with registering(): start a child and register it; a SIGINT or
    SIGTERM that arrives meanwhile is raised once the block is done."""
    global _held
    _held += 1
    try:
        yield
    finally:
        _held -= 1
        if not _held and _pending:
            signum = _pending[0]
            _pending.clear()
            _raise_for(signum)


def forked():
    """In a child just forked (probes/harness/netns.py): what the registry
    holds is the parent's to stop, and no signal is held back; the child's
    registry starts empty."""
    global _held
    _running.clear()
    _pending.clear()
    _held = 0


def register(thing, stop):
    """Records that stop(thing) stops something just started; returns thing."""
    _running.append((thing, stop))
    return thing


def forget(thing):
    """thing has been stopped: the registry lets go of it."""
    _running[:] = [(t, s) for t, s in _running if t is not thing]


def stop_all():
    """Stops everything still registered, the newest first."""
    for thing, stop in reversed(list(_running)):
        forget(thing)
        try:
            stop(thing)
        except StepFailed:
            pass


def kill_group(proc):
    """Kills a registered child started in a session of its own (a hog, a
    probe), its whole process group, waits for it and forgets it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    forget(proc)
