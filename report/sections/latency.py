"""Two studies that share one row format (a round's split and the probe's
first-byte latency): the accept mutex's delay (mutex_delay.jsonl, the setting is
"delay_ms") and a slow inline view (slowview.jsonl, the setting is "sleep_ms")."""

from dataclasses import dataclass
from typing import Optional

from acceptlab.results_io import RowError
from acceptlab.stats import NOT_RESOLVED, mean_interval
from report.common import (Failed, Meta, Study, failed_notes, get, get_arm, get_counter, get_int, get_split, is_int,
                           plural, row_reader)


def get_latency(obj: dict, key: str) -> dict:
    value = get(obj, key)
    if not isinstance(value, dict) or not all(is_int(value.get(p)) for p in ("p50", "p99")):
        raise RowError(f'"{key}" must be an object with integer "p50" and "p99"')
    return value

@dataclass(frozen=True)
class LatencyRound:
    line: int
    variant: str
    setting: object  # the delay in ms (mutex_delay) or the slow view's ms (slowview)
    round: int
    split: str
    answered: int
    connections: int
    first_byte: dict
    counts: tuple = ()  # (worker pid or tid, connections), as the probe counted them
    busy: Optional[tuple] = None  # slowview: (pid, tid) of the worker in the slow view, when the row says


def latency_row_parser(setting_key: str):
    def parse(obj: dict, line: int):
        variant = get_arm(obj)
        if "error" in obj:
            return Failed(line, (variant, obj.get(setting_key)), str(obj["error"]))
        busy = obj.get("busy_worker")
        if busy is not None:
            if not isinstance(busy, dict):
                raise RowError('"busy_worker" must be an object or null')
            busy = (get_int(busy, "pid", 1, ("busy_worker",)), get_int(busy, "tid", 1, ("busy_worker",)))
        counts = tuple(sorted(get_counter(obj, "counts").items())) if "counts" in obj else ()
        return LatencyRound(line, variant, get_int(obj, setting_key), get_int(obj, "round", 1),
                            get_split(obj, "split"), get_int(obj, "answered"), get_int(obj, "connections", 1),
                            get_latency(obj, "first_byte_us"), counts, busy)
    return parse


def latency_table(rows: list, label, head: str) -> list:
    measured = [r for r in rows if isinstance(r, LatencyRound)]
    keys = []
    for r in rows:
        key = (r.variant, r.setting) if isinstance(r, LatencyRound) else r.key
        if key not in keys:
            keys.append(key)
    out = [f"| {head} | rounds (split) | first byte p50 us | first byte p99 us |", "|---|---|---|---|"]
    for key in keys:
        mine = sorted((r for r in measured if (r.variant, r.setting) == key), key=lambda r: r.round)
        if mine:
            out.append("| %s | %s | %s | %s |" % (
                label(key), " ".join(r.split + ("!" if r.answered < r.connections else "") for r in mine),
                " ".join(str(r.first_byte["p50"]) for r in mine),
                " ".join(str(r.first_byte["p99"]) for r in mine)))
    return out + [""] + failed_notes([r for r in rows if isinstance(r, Failed)], label)



def largest_p99(rows: list, key) -> Optional[int]:
    mine = [r.first_byte["p99"] for r in rows if isinstance(r, LatencyRound) and (r.variant, r.setting) == key]
    return max(mine) if mine else None


def p99_apart(rows: list, keys: list, label) -> str:
    """Which cells' first-byte p99 this run tells apart: each cell's mean
    over its rounds with a 95 % interval; two cells are resolved apart only
    when their intervals do not overlap, otherwise not resolved (a tie at
    this run's resolution, not a finding that they are equal)."""
    stats = {}
    for key in keys:
        mine = [r.first_byte["p99"] for r in rows if isinstance(r, LatencyRound) and (r.variant, r.setting) == key]
        if mine:
            stats[key] = mean_interval(mine)
    if len(stats) < 2:
        return ""
    text = "First-byte p99, mean over the rounds with its 95 % interval: " + ", ".join(
        f"{label(k)} {m:.0f}" + (f" ± {h:.0f} us" if h is not None else " us (1 round)") for k, (m, h) in stats.items())
    apart = []
    for i, a in enumerate(stats):
        for b in list(stats)[i + 1:]:
            (ma, ha), (mb, hb) = stats[a], stats[b]
            if ha is None or hb is None:
                continue
            hi, lo = (a, b) if ma > mb else (b, a)
            if stats[hi][0] - stats[hi][1] > stats[lo][0] + stats[lo][1]:
                apart.append(f"{label(hi)} above {label(lo)}")
    return text + (". Resolved apart (intervals that do not overlap): " + ", ".join(apart) + "." if apart else
                   f". No two are resolved apart: {NOT_RESOLVED}.")


def one_worker_rounds(rows: list, key) -> tuple:
    """(rounds in which one worker answered every connection, rounds)."""
    mine = [r for r in rows if isinstance(r, LatencyRound) and (r.variant, r.setting) == key]
    return sum(1 for r in mine if r.split.split("/")[1:] and all(n == "0" for n in r.split.split("/")[1:])), len(mine)


def render_mutex_delay(meta: Meta, rows: list) -> list:
    measured = [r for r in rows if isinstance(r, LatencyRound)]
    sizes = sorted({r.connections for r in measured})
    workers = sorted({len(r.split.split("/")) for r in measured})
    delays = sorted({r.setting for r in measured}, reverse=True)
    out = ["## The accept mutex's delay", "",
           "nginx's accept_mutex (`mutex`): a worker that does not hold the token leaves the listener "
           "out of its epoll and waits at most accept_mutex_delay before trying again. A burst of "
           f"{' or '.join(map(str, sizes)) or 'N'} with {' or '.join(map(str, workers)) or 'N'} workers at "
           f"{plural(len(delays), 'delay')}: the split, and the probe's first-byte latency (from "
           "sending the request to the first byte of the answer) per round.", ""]
    out += latency_table(rows, lambda key: f"mutex, delay {key[1]} ms", "arm")
    keys = sorted({(r.variant, r.setting) for r in measured}, key=lambda k: (-k[1], k[0]))
    if keys:
        lines = []
        for key in keys:
            alone, n = one_worker_rounds(rows, key)
            lines.append(f"- delay {key[1]} ms: one worker answered every connection in {alone} of "
                         f"{plural(n, 'round')}; the largest first-byte p99 over its rounds: {largest_p99(rows, key)} us.")
        apart = p99_apart(rows, keys, lambda k: f"{k[1]} ms")
        out += ["**What this shows.**", ""] + lines + [""] + ([apart, ""] if apart else [])
    return out


def busy_served(r: LatencyRound) -> Optional[int]:
    """Connections of the round's burst the worker in the slow view answered
    (None when the row does not name that worker)."""
    if r.busy is None or not r.counts:
        return None
    ids = {str(i) for i in r.busy}
    return sum(n for k, n in r.counts if k in ids)


def render_slowview(meta: Meta, rows: list) -> list:
    measured = [r for r in rows if isinstance(r, LatencyRound)]
    settings = sorted({r.setting for r in measured})
    ms = settings[0] if len(settings) == 1 else "N"
    out = ["## A slow inline view and the accept path", "",
           f"One client keeps a worker inside `/sleep?ms={ms}` (a slow view run inline) on a keep-alive "
           "connection while bursts arrive: does a burst's first byte wait for the view? Split and "
           "first-byte latency per round.", ""]
    out += latency_table(rows, lambda key: key[0], "arm")
    keys = list(dict.fromkeys((x.variant, x.setting) for x in measured))
    if keys:
        lines = []
        for key in keys:
            mine = sorted((r for r in measured if (r.variant, r.setting) == key), key=lambda r: r.round)
            served = [busy_served(r) for r in mine]
            text = f"- {key[0]}: the largest first-byte p99 over its rounds: {largest_p99(rows, key)} us"
            if all(v is not None for v in served):
                text += (f"; the worker in the view answered {' '.join(map(str, served))} of each burst's "
                         f"{'/'.join(sorted({str(r.connections) for r in mine}))} connections, round by round "
                         "(the busy client's answers name it)")
            lines.append(text + ".")
        took = [r for r in measured if busy_served(r)]
        none = [r for r in measured if busy_served(r) == 0]
        if took or none:
            def span(rs):
                return f"{min(r.first_byte['p99'] for r in rs)} to {max(r.first_byte['p99'] for r in rs)} us"
            lines.append(f"- Over every arm: in the {plural(len(took), 'round')} where the worker in the view answered "
                         "part of the burst, first-byte p99 " + (span(took) if took else "-")
                         + f"; in the {plural(len(none), 'round')} where it answered none, " + (span(none) if none else "-")
                         + ".")
        if any(busy_served(r) is None for r in measured):
            lines.append("- The rows do not name the worker in the view, so which worker each burst waited on is "
                         "not derived.")
        apart = p99_apart(rows, keys, lambda k: k[0])
        out += ["**What this shows.**", ""] + lines + [""] + ([apart, ""] if apart else [])
    return out


read_mutex_delay = row_reader(latency_row_parser("delay_ms"))
read_slowview = row_reader(latency_row_parser("sleep_ms"))
MUTEX_DELAY = Study("mutex_delay", "mutex_delay.jsonl", read_mutex_delay, render_mutex_delay,
                    is_round=lambda row: isinstance(row, LatencyRound))
SLOWVIEW = Study("slowview", "slowview.jsonl", read_slowview, render_slowview,
                 is_round=lambda row: isinstance(row, LatencyRound))
