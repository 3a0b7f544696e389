"""alternation: several servers measured side by side in one block, the
cost, throughput and trace_overhead studies' method.

Every entrant's server is started for the block and kept (or, fresh,
started anew for each round); each is warmed up once after its start
(unrecorded); then rounds of one short wrk run per entrant,
in an order shuffled from round to round (seeded, so a rerun repeats it),
every run between two runs of the reference entrant (bare), each after a
short settle and each run's CPU time read the same way (CpuMeter over the
wrk run). The machine's speed moves, far more between runs minutes apart
(and within some stretches of seconds) than between runs a second apart;
so the runs are short and many, and a run's ratio is taken
against the reference at the same moment: its runs just before and just
after, drawn together by a line (partner_at). An A/A entrant (the
reference's server again, as an entrant of its own) shows what the method
resolves.

The paired method (run_block's paired=True, the cost study's --cost-method paired): the same
block and the same shuffled rounds, but each other entrant's run goes at
the same time as one of the reference's, both servers on the same pinned
CPU and both wrk on theirs, each run's CPU time read the same way. The
host under a VM can slow it down over stretches of seconds, by far more
than the differences the study looks for, and the guest charges that as
CPU time (a fixed loop's CPU time moves with it); two servers sharing one
CPU at the same moment share that too, so a run's ratio to its paired
reference run is free of it, where runs a second apart are not. Each
server gets about half the CPU, as it would beside any other busy process.

A block runs in one process (the caller's network namespace) and returns
its rows; the servers are stopped by the block whatever happens."""

import contextlib
import random
import threading
import time

from acceptlab.stats import partner_at, place_of
from probes.harness.cpu import CpuMeter


def partner_series(rows, partner, field, same=("workers", "mode")):
    """{the values of same: [(seq, field), ...] in seq order} of the
    partner's measured runs, one series per block (the same workers and
    mode); partner: an arm's name, or a test on a row. Built once per
    field, not once per row."""
    is_partner = partner if callable(partner) else (lambda r: r.get("arm") == partner)
    out = {}
    for r in rows:
        if is_partner(r) and "error" not in r and r.get(field) is not None and r.get("seq") is not None:
            out.setdefault(tuple(r.get(k) for k in same), []).append((r["seq"], r[field]))
    return {key: sorted(series) for key, series in out.items()}


def ratio_at(row, series, field, same=("workers", "mode")):
    """row's field over its partner's at row's position (partner_at at
    place_of(row): a paired row's partner run exactly, else on the line
    through the runs around it), the partner's series of row's block from
    partner_series(..., same); None when either is missing."""
    value = row.get(field)
    place = place_of(row.get("seq"), row.get("paired_seq"))
    base = partner_at(series.get(tuple(row.get(k) for k in same), []), place)
    if value is None or not base:
        return None
    return round(value / base, 4)


class Entrant:
    """One server in a block: name (the rows' "arm"), open() -> a context
    manager yielding a Live, and life(live) -> fields over the server's life
    (after it stopped)."""

    def __init__(self, name, open_, life=None, **tags):
        self.name, self.open, self.life, self.tags = name, open_, life or (lambda live: {}), tags


class Live:
    """A running entrant: its process tree's root pid (what CpuMeter reads),
    its port, and what its opener wants kept (proc, ...)."""

    def __init__(self, pid, port, **kept):
        self.pid, self.port, self.kept = pid, port, kept


# In a block's network namespace, a Connection: close block keeps no
# TIME_WAIT sockets: the server closes first, so each of its connections
# would leave one, pinned as a timer to the server's CPU; when their
# TIME_WAIT ends (TCP_TIMEWAIT_LEN) they expire there in a burst (the table
# fills within seconds, then empties at once), and the timer's work lands
# on whatever server runs then (this
# kernel charges softirq time to the task it interrupts), in the middle of
# other arms' runs. With the table's cap at 0 a closed connection is freed
# at once, for every arm alike.
TIME_WAIT_CAP = 0


def keep_no_time_wait():
    """net.ipv4.tcp_max_tw_buckets = TIME_WAIT_CAP in this process's network
    namespace (its own: the caller made it); returns the value set."""
    with open("/proc/sys/net/ipv4/tcp_max_tw_buckets", "w") as f:
        f.write("%d\n" % TIME_WAIT_CAP)
    return TIME_WAIT_CAP


# Before each measured run, this long with nothing measured: what the run
# before left to the kernel (deferred frees, RCU callbacks, timers, which
# this kernel charges to whatever task they interrupt) is done before the
# meter starts, not charged to the next server.
SETTLE_S = 0.1


def shuffled(entrants, rnd):
    """Round rnd's order: the list shuffled by a generator seeded with the
    round's number (the same rounds give the same orders), so no entrant
    always follows the same one: what a run leaves behind lands on a
    different server each round, as noise, not as one server's bias."""
    order = list(entrants)
    random.Random(rnd).shuffle(order)
    return order


def round_order(reference, others, rnd, opening=None):
    """Round rnd's runs: the others shuffled (shuffled), each followed by a
    run of the reference, and the first round of its servers (opening;
    round 1 unless said) opening with one, so every other run sits between
    two reference runs of the same servers (the one before it, and the one
    after)."""
    order = [reference] if (rnd == 1 if opening is None else opening) else []
    for e in shuffled(others, rnd):
        order += [e, reference]
    return order


def run_block(reference, others, warm, run_one, go_on, progress, paired=False, fresh=False):
    """Starts the reference and every other entrant, warms each up
    (warm(entrant, live)), then runs rounds (round_order: every other run
    between two runs of the reference; paired: the others shuffled, each
    run at the same time as one of the reference, run_pair), each run or
    pair SETTLE_S after the one before (run_one(entrant, live, round, seq)
    -> its row, seq its place in the block); after each round
    go_on(rows, round) -> (again?, progress text), and progress(round,
    text). fresh: every server is stopped after each round and the next
    round starts (and warms up) new ones, so what one server's start drew
    (which worker holds what, where its memory lies) is one round's, not
    the whole block's: it varies from round to round as the rounds' noise
    does, and the rounds' interval covers it, where a server kept for the
    block puts the same draw into every round. Returns the rows, each with
    "round", "order" (its place in the round), "seq" (its place in the
    block; a paired run's "paired_seq" is its reference run's),
    "server_set" (which start of the servers ran it: 1 for a block that
    keeps them, the round with fresh), the entrant's tags, its port and
    its life fields (read once its servers have stopped)."""
    entrants = [reference] + list(others)
    made, ran = [], []  # every row, and the rows of the servers now running
    rnd, server_set, again = 0, 0, True

    def record(e, row, rnd, order, seq, **extra):
        row.update(dict({"round": rnd, "order": order, "seq": seq, "server_set": server_set}, **extra), **e.tags)
        made.append((e, row))
        ran.append((e, row))

    while again:
        server_set += 1
        ran, live = [], {}
        with contextlib.ExitStack() as stack:
            for e in entrants:
                live[id(e)] = stack.enter_context(e.open())
            for e in entrants:
                warm(e, live[id(e)])
            first = rnd + 1
            while again:
                rnd += 1
                if paired:
                    for order, e in enumerate(shuffled(others, rnd), 1):
                        time.sleep(SETTLE_S)
                        seq = len(made)
                        ref_row, row = run_pair(run_one, (reference, live[id(reference)]), (e, live[id(e)]), rnd,
                                                seq)
                        record(reference, ref_row, rnd, order, seq)
                        record(e, row, rnd, order, seq + 1, paired_seq=seq)
                else:
                    for order, e in enumerate(round_order(reference, others, rnd, opening=rnd == first), 1):
                        time.sleep(SETTLE_S)
                        row = run_one(e, live[id(e)], rnd, len(made))
                        record(e, row, rnd, order, len(made))
                again, text = go_on([r for _, r in made], rnd)
                progress(rnd, text)
                if fresh:
                    break
        life = {id(e): dict(e.life(live[id(e)]), port=live[id(e)].port) for e in entrants}
        for e, row in ran:
            row.update(life[id(e)])
    return [r for _, r in made]


# A pair's two runs (run_pair): each thread's barrier, which metered()
# waits at before its meter starts, so both meters and both runs start
# together.
_pair = threading.local()


def run_pair(run_one, first, second, rnd, seq):
    """(first's row, second's row): run_one for both (entrant, live) pairs at
    once, in two threads, their metered() runs starting together; the first
    at place seq, the second at seq + 1. An exception in either is raised
    once both have ended."""
    barrier = threading.Barrier(2, timeout=PAIR_START_TIMEOUT_S)
    out = [None, None]

    def go(i, e, live):
        _pair.barrier = barrier
        try:
            out[i] = (True, run_one(e, live, rnd, seq + i))
        except BaseException as exc:  # noqa: B902 - handed to the caller's thread below
            barrier.abort()  # the other run must not wait for a start that will not come
            out[i] = (False, exc)
        finally:
            _pair.barrier = None

    threads = [threading.Thread(target=go, args=(i, e, live)) for i, (e, live) in enumerate((first, second))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = [value for ok, value in out if not ok]
    if failed:  # the cause first: the other run's broken barrier follows from it
        raise next((e for e in failed if not isinstance(e, threading.BrokenBarrierError)), failed[0])
    return out[0][1], out[1][1]


PAIR_START_TIMEOUT_S = 60  # the longest one run of a pair may take to reach its start (a server's reads first)


def metered(pid, run):
    """(run()'s result, the CpuMeter over it) for the process tree at pid;
    in a pair (run_pair), started together with the other run's."""
    barrier = getattr(_pair, "barrier", None)
    if barrier is not None:
        barrier.wait()
    with CpuMeter(pid) as meter:
        out = run()
    return out, meter
