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
    return ModelRow(line, get_str(obj, "model"), get_str(obj, "case"), get_int(obj, "workers", 1),
                    get_int(obj, "connections", 0), cpus, get_str(obj, "shape"), get_str(obj, "method"),
                    predicted, measured, get_int(obj, "measured_rounds", 0), tuple(ci) if ci else None,
                    consistent, obj.get("source") or "-", obj.get("latency_source"))


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


read_models = row_reader(parse_model_row)
STUDY = Study("models", "models.jsonl", read_models, render_models, is_round=lambda row: False)
