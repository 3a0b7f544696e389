"""The faults table (faults.jsonl): each fault test's case, what it expects,
what this run observed, the counts that prove its window was hit, and
whether it held (tests/faults.py writes the rows)."""

from dataclasses import dataclass
from typing import Optional

from acceptlab.results_io import RowError, json_kind
from report.common import SEED_000, Failed, Meta, Study, cell_text, failed_notes, get_bool, get_str, row_reader


@dataclass(frozen=True)
class FaultCase:
    line: int
    case: str
    expected: str
    observed: str
    held: Optional[bool]  # None: the test was skipped (observed says why)
    # ((name, count), ...): the observed counts that prove the window, each
    # above 0 in a case that proved it; None: the row carries none.
    window: Optional[tuple] = None

    @property
    def window_proven(self) -> bool:
        return bool(self.window) and all(count > 0 for _, count in self.window)


def parse_window(obj: dict) -> Optional[tuple]:
    if "window" not in obj:
        return None
    window = obj["window"]
    if not isinstance(window, dict) or not all(isinstance(v, int) and not isinstance(v, bool)
                                               for v in window.values()):
        raise RowError('"window" must be an object of integer counts, got %s' % json_kind(window), ("window",))
    return tuple(sorted(window.items()))


def parse_fault_row(obj: dict, line: int):
    if "error" in obj:
        return Failed(line, ("faults",), str(obj["error"]))
    held = None if obj.get("held", False) is None else get_bool(obj, "held")
    observed = get_str(obj, "observed") if held is not None else "skipped: " + get_str(obj, "skipped")
    return FaultCase(line, get_str(obj, "case"), get_str(obj, "expected"), observed, held, parse_window(obj))


def window_text(c: FaultCase) -> str:
    if c.held is None:
        return "skipped"
    if c.window is None:
        return "not recorded"
    return ", ".join(f"{name.replace('_', ' ')} {count}" for name, count in c.window) or "none"


def render_faults(meta: Meta, rows: list) -> list:
    cases = [r for r in rows if isinstance(r, FaultCase)]
    emfile = any(c.case.startswith("out of descriptors") for c in cases)
    out = ["## Faults: accept sharing's corrections" + (", and running out of descriptors" if emfile else ""), "",
           "Each case is one of the fault tests, run by the campaign: accept sharing's in "
           "`tests/test_fdpass.py` (the situation that found a correction and what the correction "
           "guarantees)" + (" and running out of descriptors in `tests/test_emfile.py` (RLIMIT_NOFILE "
                            "lowered until accept() fails with EMFILE, per variant)" if emfile else "")
           + ". Observed is what this run saw (written by the test before it asserts); the window is the "
           "observed counts that prove the test reached the situation its case needs (each must be above 0, "
           "or the test fails); \"held\" is the test's verdict.", "",
           "| case | expected | observed | window | held |", "|---|---|---|---|---|"]
    for c in cases:
        verdict = "skipped" if c.held is None else "yes" if c.held else "**no**"
        out.append(f"| {cell_text(c.case)} | {cell_text(c.expected)} | {cell_text(c.observed)} | "
                   f"{cell_text(window_text(c))} | {verdict} |")
    out.append("")
    out += failed_notes([r for r in rows if isinstance(r, Failed)], lambda key: "fault cases")
    if cases:
        ran = [c for c in cases if c.held is not None]
        broken = [c.case for c in ran if not c.held]
        skipped = len(cases) - len(ran)
        out += ["**What this shows.** " + (f"{len(ran)} of {len(ran)} invariants held" if not broken else
                f"{len(ran) - len(broken)} of {len(ran)} held; broken: " + "; ".join(broken))
                + (f" ({skipped} skipped)" if skipped else "") + ". " + proven_text(ran)
                + " Every fault test writes its row whatever "
                "its outcome (tests/faults.py), so a case that failed is a row here, not a gap.", ""]
    out += ["Reference rows (not measured here), quoted from the seed design note "
            f'`{SEED_000}` ("Accept sharing"), its own server and machines:', "",
            "| case | the note's figure | source |", "|---|---|---|"]
    out += [f"| {case} | {figure} | `{SEED_000}`, {where} |" for case, figure, where in FAULT_REFERENCE_ROWS]
    out.append("")
    return out


def proven_text(ran: list) -> str:
    """How many of the cases that ran proved their window."""
    recorded = [c for c in ran if c.window is not None]
    if not recorded:
        return "These rows carry no window counts, so whether each case reached its window is not shown here."
    proven = [c for c in recorded if c.window_proven]
    unproven = [c.case for c in recorded if not c.window_proven]
    return (f"{len(proven)} of {len(ran)} proved their window (every count above 0)"
            + (f"; not proven: {'; '.join(unproven)}" if unproven else "")
            + (f"; {len(ran) - len(recorded)} carry no window counts" if len(recorded) < len(ran) else "") + ".")


FAULT_REFERENCE_ROWS = (
    ("1 worker 1 held 3 s", "before the correction: 16 of a burst of 32 went to it, each answered 3.0 s late",
     'correction of 2026-09-30 under "The pick"'),
    ("4 queued to a dead worker", "before: all 16 still open 1 s later; after: all 16 read a close within 3 ms",
     'correction of 2026-09-30, "a worker that dies"'),
    ("6 socket churn (macOS)", "before: 179 of 1600 requests lost; after: none (Linux not measured there)",
     'correction of 2026-09-29, "the kernel\'s collector"'),
)


read_faults = row_reader(parse_fault_row)
STUDY = Study("faults", "faults.jsonl", read_faults, render_faults, is_round=lambda row: isinstance(row, FaultCase))
