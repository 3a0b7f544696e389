"""The diagnosis study (diagnosis.jsonl): bin/acceptlab-diagnose run against
our servers and the peers, active and passive, what it said set beside the
mechanism each server is configured with and beside each server's own
record of which worker served each connection."""

import json
from dataclasses import dataclass
from typing import Optional

from acceptlab.results_io import RowError, json_kind
from report.common import (Meta, Study, cell_text, get, get_bool, get_counter, get_int, get_str, number, plural,
                           row_reader)

FIELDS = ("listener", "listeners", "wait", "selector", "handoff", "closest_variant")
MODES = ("active", "passive")


@dataclass(frozen=True)
class Diagnosed:
    """One server x mode: what the diagnosis found, what was expected, the truth."""
    line: int
    server: str
    ours: bool
    setting: str
    workers: int
    mode: str
    load: Optional[str]
    connections: int
    watch_s: Optional[float]
    found: tuple      # FIELDS' values, as the diagnosis said
    expected: tuple   # FIELDS' values, as the server is configured
    split: Optional[str]
    served: tuple     # ((worker id, served), ...) sorted by id
    truth: tuple      # ((worker id, connections), ...) sorted by id
    truth_split: Optional[str]
    truth_source: str
    truth_ids: str
    by_split: bool
    traced: bool
    partial: bool

    @property
    def mismatched(self) -> list:
        return [k for k, f, e in zip(FIELDS, self.found, self.expected) if f != e]

    @property
    def served_matches(self) -> bool:
        if not self.traced:
            return False
        if self.by_split:
            return sorted(n for _, n in self.served) == sorted(n for _, n in self.truth)
        return self.served == self.truth


@dataclass(frozen=True)
class NotDiagnosed:
    """A server not diagnosed: "unavailable" (a peer that cannot be had), or
    a step that failed or was skipped (mode None: the whole server)."""
    line: int
    server: str
    workers: Optional[int]
    mode: Optional[str]
    kind: str
    reason: str


def fields_of(obj: dict, where: tuple = ()) -> tuple:
    out = []
    for k in FIELDS:
        v = get(obj, k, where)
        if k == "listeners":
            if not (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
                raise RowError(f'"listeners" must be an integer >= 0, got {json.dumps(v)}', where + (k,))
        elif k == "handoff":
            if v is not None and not isinstance(v, bool):
                raise RowError(f'"handoff" must be true, false or null, got {json.dumps(v)}', where + (k,))
        elif v is not None and not isinstance(v, str):
            raise RowError(f'"{k}" must be a string or null, got {json_kind(v)}', where + (k,))
        out.append(v)
    return tuple(out)


def opt_str(obj: dict, key: str) -> Optional[str]:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise RowError(f'"{key}" must be a string or null, got {json_kind(value)}')
    return value


def parse_diagnosis_row(obj: dict, line: int):
    server = get_str(obj, "server")
    if obj.get("kind") == "unavailable":
        return NotDiagnosed(line, server, None, None, "unavailable", get_str(obj, "reason"))
    workers = obj.get("workers")
    if workers is not None and not (isinstance(workers, int) and not isinstance(workers, bool) and workers >= 1):
        raise RowError(f'"workers" must be an integer >= 1, got {json.dumps(workers)}')
    mode = obj.get("mode")
    if mode is not None and mode not in MODES:
        raise RowError(f'"mode" must be one of {", ".join(MODES)}, got {json.dumps(mode)}')
    if "error" in obj:
        return NotDiagnosed(line, server, workers, mode, "error", get_str(obj, "error"))
    if mode is None or workers is None:
        raise RowError('a diagnosed row needs "mode" and "workers"')
    expected = get(obj, "expected")
    if not isinstance(expected, dict):
        raise RowError(f'"expected" must be an object, got {json_kind(expected)}')
    found = fields_of(obj)
    expected = fields_of(expected, ("expected",))
    served = tuple(sorted(get_counter(obj, "served").items()))
    truth = tuple(sorted((k, n) for k, n in get_counter(obj, "truth").items() if n))
    compared_by = get_str(obj, "compared_by")
    watch = obj.get("watch_s")
    if watch is not None and (isinstance(watch, bool) or not isinstance(watch, (int, float)) or watch <= 0):
        raise RowError(f'"watch_s" must be a number > 0 or null, got {json.dumps(watch)}')
    row = Diagnosed(line, server, get_bool(obj, "ours"), get_str(obj, "setting"), workers, mode, opt_str(obj, "load"),
                    get_int(obj, "connections", 1), watch, found, expected, opt_str(obj, "split"), served, truth,
                    opt_str(obj, "truth_split"), get_str(obj, "truth_source"), get_str(obj, "truth_ids"),
                    compared_by == "split", get(obj, "traced") is True, get(obj, "partial") is True)
    # The flags the study wrote must say what the row's own counts say.
    if get_bool(obj, "served_matches_truth") != row.served_matches:
        raise RowError('"served_matches_truth" disagrees with "served" and "truth"')
    if get_bool(obj, "mechanism_matches") != (not row.mismatched):
        raise RowError('"mechanism_matches" disagrees with the diagnosis\'s fields and "expected"')
    return row


def mechanism_text(found: tuple) -> str:
    """'shared, epoll-exclusive'; 'reuseport x4 (bpf), epoll, hand-off'."""
    listener, listeners, wait, selector, handoff, _ = found
    text = listener or "?"
    if listeners and listeners > 1:
        text += f" x{listeners}"
    if selector:
        text += f" ({selector})"
    text += f", {wait or 'wait unseen'}"
    if handoff:
        text += ", hand-off"
    return text


def server_label(r) -> str:
    return f"{r.server}, {plural(r.workers, 'worker')}" if r.workers else r.server


def mismatch_text(r: Diagnosed) -> str:
    parts = []
    names = dict(zip(FIELDS, zip(r.found, r.expected)))
    for k in r.mismatched:
        got, want = names[k]
        parts.append(f"{k} {json.dumps(got)} where {json.dumps(want)} was expected")
    if not r.served_matches:
        if not r.traced:
            parts.append("nothing traced, so no served counts")
        else:
            served = ", ".join(f"{k} {n}" for k, n in r.served) or "none"
            truth = ", ".join(f"{k} {n}" for k, n in r.truth) or "none"
            how = "as splits" if r.by_split else f"by {r.truth_ids}"
            parts.append(f"served {r.split or '-'} against {r.truth_source} {r.truth_split or '-'} "
                         f"(compared {how}: served {served}; truth {truth})")
    if r.partial:
        parts.append("the watch ended early (partial)")
    return f"- {server_label(r)}, {r.mode}: " + "; ".join(parts) + "."


def render_diagnosis(meta: Meta, rows: list) -> list:
    done = [r for r in rows if isinstance(r, Diagnosed)]
    missing = [r for r in rows if isinstance(r, NotDiagnosed)]
    out = ["## The diagnosis against each server's own record", ""]
    loads = sorted({r.load for r in done if r.mode == "active" and r.load})
    per = sorted({r.connections // r.workers for r in done if r.connections % r.workers == 0})
    watches = sorted({r.watch_s for r in done if r.mode == "passive" and r.watch_s})
    out.append(
        "`bin/acceptlab-diagnose` (`docs/diagnose.md`) was run by port against each "
        "server, started fresh: our variants and the peers (nginx, HAProxy, a Node.js cluster, as the peers "
        "study configures them). Each was diagnosed twice: **active**, the diagnosis running the probe itself ("
        + (f"`--load {', '.join(loads)}`" if loads else "`--load`")
        + (f", {' or '.join(map(str, per))} connections per worker" if per else "")
        + "), and **passive**, the diagnosis watching"
        + (f" for {' or '.join(number(w) for w in watches)} s" if watches else "")
        + " and sending nothing while the study ran the same burst against the server. Each row sets what the "
        "diagnosis found beside the mechanism the server is configured with (expected: the closest acceptlab "
        "variant; the listener, wait, selector and hand-off fields are held too), and each worker's served "
        "count (the connections whose bytes that thread read first, from the kernel) beside the server's "
        "own record of who served: our servers' and Node's `/pid` answers (pid, or tid in threads mode), "
        "nginx's access log (`$pid` per connection), HAProxy's thread number (`%[thread]`, which is no "
        "kernel tid: compared as a split). The diagnosis never asks the server; the answers were read "
        "beside it.")
    out.append("")
    if done:
        out += ["| server | workers | setting | mode | mechanism found | closest variant | expected | served split "
                "| truth split | truth from | match |",
                "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in done:
            why = [w for w, bad in (("mechanism", r.mismatched), ("served", not r.served_matches)) if bad]
            match = "yes" if not why else "no: " + ", ".join(why)
            out.append(f"| {cell_text(r.server)} | {r.workers} | {cell_text(r.setting)} | {r.mode} | "
                       f"{cell_text(mechanism_text(r.found))} | {r.found[5] or '-'} | {r.expected[5] or '-'} | "
                       f"{r.split or '-'} | {r.truth_split or '-'} | {cell_text(r.truth_source)} | {match} |")
        out.append("")
        both = [r for r in done if not r.mismatched and r.served_matches]
        mech = sum(not r.mismatched for r in done)
        served = sum(r.served_matches for r in done)
        bad = [r for r in done if r.mismatched or not r.served_matches]
        out.append(f"**What this shows.** {len(both)} of {plural(len(done), 'diagnosis', 'diagnoses')} match "
                   f"the server's own record: the mechanism as configured in {mech} of {len(done)}, every "
                   f"worker's served count equal to the truth in {served} of {len(done)}"
                   + (". Where they differ:" if bad else "."))
        out.append("")
        if bad:
            out += [mismatch_text(r) for r in bad] + [""]
    else:
        out += ["No server was diagnosed in this run.", ""]
    if missing:
        out += ["Not diagnosed, by reason:", ""]
        groups = {}
        for m in missing:
            what = "unavailable" if m.kind == "unavailable" else (
                "skipped" if m.reason.startswith("skipped") else "failed")
            reason = m.reason[len("skipped: "):] if what == "skipped" and m.reason.startswith("skipped: ") \
                else m.reason
            servers = groups.setdefault((what, reason), {})
            servers.setdefault(server_label(m), []).extend([m.mode] if m.mode else [])
        for (what, reason), servers in groups.items():
            named = "; ".join(label + (f" ({', '.join(modes)})" if modes else "") for label, modes in servers.items())
            out.append(f"- {what}: {cell_text(reason)}: {named}")
        out.append("")
    return out


read_diagnosis = row_reader(parse_diagnosis_row)
STUDY = Study("diagnosis", "diagnosis.jsonl", read_diagnosis, render_diagnosis,
              is_round=lambda row: isinstance(row, Diagnosed))
