"""The models (models.jsonl, written by models/skew.py campaign): what each
model predicts against what was measured, and the race model's sweep."""

from dataclasses import dataclass
from typing import Optional

from common import (Failed, Meta, RowError, Study, cell_text, get_int, get_number, get_str, is_int, plural,
                    row_reader)


@dataclass(frozen=True)
class ModelRow:
    line: int
    model: str
    case: str
    workers: int
    connections: int
    cpus: Optional[int]
    shape: str
    method: str
    predicted: Optional[float]
    measured: Optional[float]
    rounds: int
    ci95: Optional[tuple]
    consistent: Optional[bool]
    source: str
    latency_source: Optional[str] = None
    measured_splits: tuple = ()  # the balancing rounds a row was checked against, when it says them
    predicted_split: Optional[str] = None  # a rule's predicted split


def parse_model_row(obj: dict, line: int):
    if "error" in obj:
        return Failed(line, (obj.get("model"),), str(obj["error"]))
    predicted = get_number(obj, "predicted_outside", nullable=True)
    measured = get_number(obj, "measured_outside", nullable=True)
    ci = obj.get("ci95")
    if ci is not None and not (isinstance(ci, list) and len(ci) == 2
                               and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in ci)):
        raise RowError('"ci95" must be null or [low, high]')
    consistent = obj.get("consistent")
    if consistent is not None and not isinstance(consistent, bool):
        raise RowError('"consistent" must be true, false or null')
    cpus = obj.get("cpus")
    if cpus is not None and not is_int(cpus):
        raise RowError('"cpus" must be an integer or null')
    splits = obj.get("measured_splits") or []
    if not isinstance(splits, list) or not all(isinstance(x, str) for x in splits):
        raise RowError('"measured_splits" must be an array of splits')
    rule = obj.get("predicted_split")
    if rule is not None and not isinstance(rule, str):
        raise RowError('"predicted_split" must be a split or null')
    return ModelRow(line, get_str(obj, "model"), get_str(obj, "case"), get_int(obj, "workers", 1),
                    get_int(obj, "connections", 0), cpus, get_str(obj, "shape"), get_str(obj, "method"),
                    predicted, measured, get_int(obj, "measured_rounds", 0), tuple(ci) if ci else None,
                    consistent, obj.get("source") or "-", obj.get("latency_source"), tuple(splits), rule)


def pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.0%}" if x >= 0.1 or x == 0 else f"{x:.1%}"


def render_models(meta: Meta, rows: list) -> list:
    out = ["## Models: predicted against measured", ""]
    out.append(
        "What was measured and predicted (`models/`, see its README for the assumptions): "
        "`reuseport-model` opens bursts to N bare SO_REUSEPORT listeners (no workers, no HTTP, in a network "
        "namespace of its own) and counts where each landed, against the exact chance that a uniform hash "
        "spread falls outside 2:1; `exclusive-model` records which of N EPOLLEXCLUSIVE waiters the kernel "
        "wakes for each connection, against the rule read from fs/eventpoll.c (the first-registered idle "
        "waiter wins); the race model simulates the bare accept race from the wake-to-accept latencies the "
        "tracer measured and predicts how often a 2-worker round falls outside 2:1, checked against this "
        "run's balancing rows. \"Outside\" is the share of rounds (repetitions) outside 2:1; the interval "
        "is the measured share's 95% (Clopper-Pearson); consistent means the prediction lies inside it "
        "(for a rule: the rule held for every connection).")
    out.append("")
    measured = [r for r in rows if isinstance(r, ModelRow) and r.measured is not None]
    sweep = [r for r in rows if isinstance(r, ModelRow) and r.model == "race-sweep"]
    if measured:
        out += ["| model | case | N x K | method | predicted outside | measured outside (rounds) | 95% interval | "
                "consistent | measured by |", "|---|---|---|---|---|---|---|---|---|"]
        for r in measured:
            ci = f"{pct(r.ci95[0])}–{pct(r.ci95[1])}" if r.ci95 else "-"
            cons = "-" if r.consistent is None else "yes" if r.consistent else "NO"
            out.append(f"| {r.model} | {cell_text(r.case)} | {r.workers} x {r.connections} | {r.method} | "
                       f"{pct(r.predicted)} | {pct(r.measured)} ({r.rounds}) | {ci} | {cons} | "
                       f"{cell_text(r.source)} |")
        out.append("")
    out += beside_balancing(measured)
    if sweep:
        ns = sorted({r.workers for r in sweep})
        cs = sorted({r.cpus for r in sweep if r.cpus is not None})
        grid = {(r.workers, r.cpus): r.predicted for r in sweep}
        out += ["### The race model on machines bigger than this one (predicted only)", "",
                "Share of burst rounds (K = 16 connections per worker) outside 2:1 for N workers on C CPUs, "
                f"simulated from the wake-to-accept latencies of `{cell_text(sweep[0].latency_source or 'unknown')}`; "
                "not checked on a machine with more CPUs than this run's.",
                "", "| N workers | " + " | ".join(f"C = {c}" for c in cs) + " |", "|---|" + "---|" * len(cs)]
        for n in ns:
            out.append(f"| {n} | " + " | ".join(pct(grid.get((n, c))) for c in cs) + " |")
        out.append("")
    failed = [r for r in rows if isinstance(r, Failed)]
    checked = [r for r in measured if r.consistent is not None]
    bad = [r for r in checked if not r.consistent]
    text = (f"**What this shows.** {sum(r.consistent for r in checked)} of {plural(len(checked), 'prediction')} "
            "checked against a measurement here were consistent with it")
    text += (": " + "; ".join(f"{r.model} {r.case} predicted {pct(r.predicted)}, measured {pct(r.measured)}"
                                for r in bad) + " were not." if bad else ".")
    if failed:
        text += f" {plural(len(failed), 'model step')} failed: " + "; ".join(cell_text(f.error) for f in failed) + "."
    out += [text, ""]
    return out


def beside_balancing(measured: list) -> list:
    """The predictions checked against the balancing rows, a table per worker
    count, each beside the rounds it was checked against; only when the run
    has balancing rows at more than one worker count."""
    mine = [r for r in measured if r.source.startswith("balancing.jsonl")]
    counts = sorted({r.workers for r in mine})
    if len(counts) < 2:
        return []
    out = ["### The models beside the balancing rows, by worker count", "",
           "Each prediction above that was checked against this run's balancing rounds, at the worker count "
           "it was made for (16 connections per worker), beside those rounds' splits. At more than 2 workers "
           "the rounds are the back-to-back ones of \"Balancing at more workers\", and the race model runs on "
           "this machine's CPUs from the latencies traced at 2 workers; the EPOLLEXCLUSIVE rule's split assumes a "
           "server whose wait queue is as it started, which a ramp that follows bursts on the same server is not.",
           ""]
    for n in counts:
        out += [f"#### {n} workers", "",
                "| arm | case | model | predicted | measured rounds | measured outside | consistent |",
                "|---|---|---|---|---|---|---|"]
        for r in (r for r in mine if r.workers == n):
            arm = r.source.split("variant ", 1)[-1]
            predicted = f"{pct(r.predicted)} outside" + (f" (split {r.predicted_split})" if r.predicted_split else "")
            cons = "-" if r.consistent is None else "yes" if r.consistent else "NO"
            case = r.case if r.case.startswith(r.shape) else r.shape
            out.append(f"| {cell_text(arm)} | {cell_text(case)} | {r.model} ({r.method}) | {predicted} | "
                       f"{' '.join(r.measured_splits) or '-'} | {pct(r.measured)} ({r.rounds}) | {cons} |")
        out.append("")
    return out


read_models = row_reader(parse_model_row)
STUDY = Study("models", "models.jsonl", read_models, render_models, is_round=lambda row: False)
