"""Two studies that share one row format (a round's split and the probe's
first-byte latency): the accept mutex's delay (mutex_delay.jsonl, the setting is
"delay_ms") and a slow inline view (slowview.jsonl, the setting is "sleep_ms")."""

from dataclasses import dataclass
from typing import Optional

from common import (Failed, Meta, RowError, Study, failed_notes, get, get_int, get_split, get_str, is_int,
                    row_reader)


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


def latency_row_parser(setting_key: str):
    def parse(obj: dict, line: int):
        variant = get_str(obj, "variant")
        if "error" in obj:
            return Failed(line, (variant, obj.get(setting_key)), str(obj["error"]))
        return LatencyRound(line, variant, get_int(obj, setting_key), get_int(obj, "round", 1),
                            get_split(obj, "split"), get_int(obj, "answered"), get_int(obj, "connections", 1),
                            get_latency(obj, "first_byte_us"))
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



def worst_p99(rows: list, key) -> Optional[int]:
    mine = [r.first_byte["p99"] for r in rows if isinstance(r, LatencyRound) and (r.variant, r.setting) == key]
    return max(mine) if mine else None


def render_mutex_delay(meta: Meta, rows: list) -> list:
    out = ["## The accept mutex's delay", "",
           "nginx's accept_mutex (`mutex`): a worker that does not hold the token leaves the listener "
           "out of its epoll and waits at most accept_mutex_delay before trying again. A burst of 32 "
           "with 2 workers at three delays: the split, and the probe's first-byte latency (from "
           "sending the request to the first byte of the answer) per round.", ""]
    out += latency_table(rows, lambda key: f"mutex, delay {key[1]} ms", "arm")
    worst = [(key, worst_p99(rows, key)) for key in sorted({(r.variant, r.setting) for r in rows
                                                            if isinstance(r, LatencyRound)},
                                                           key=lambda k: (-k[1], k[0]))]
    if worst:
        out += ["**What this shows.** Worst first-byte p99 per delay: "
                + ", ".join(f"{k[1]} ms: {p} us" for k, p in worst) + ".", ""]
    return out


def render_slowview(meta: Meta, rows: list) -> list:
    settings = sorted({r.setting for r in rows if isinstance(r, LatencyRound)})
    ms = settings[0] if len(settings) == 1 else "N"
    out = ["## A slow inline view and the accept path", "",
           f"One client keeps a worker inside `/sleep?ms={ms}` (a slow view run inline) on a keep-alive "
           "connection while bursts arrive: an accept path that leaves new connections with the "
           "busy worker makes them wait for the view. Split and first-byte latency per round.", ""]
    out += latency_table(rows, lambda key: key[0], "arm")
    worst = [(r, worst_p99(rows, (r, s))) for r, s in dict.fromkeys(
        (x.variant, x.setting) for x in rows if isinstance(x, LatencyRound))]
    if worst:
        out += ["**What this shows.** Worst first-byte p99: "
                + ", ".join(f"{v}: {p} us" for v, p in worst) + ".", ""]
    return out


read_mutex_delay = row_reader(latency_row_parser("delay_ms"))
read_slowview = row_reader(latency_row_parser("sleep_ms"))
MUTEX_DELAY = Study("mutex_delay", "mutex_delay.jsonl", read_mutex_delay, render_mutex_delay,
                    is_round=lambda row: isinstance(row, LatencyRound))
SLOWVIEW = Study("slowview", "slowview.jsonl", read_slowview, render_slowview,
                 is_round=lambda row: isinstance(row, LatencyRound))
