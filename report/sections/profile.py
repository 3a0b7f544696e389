"""The profile study (profile.jsonl): where the CPU goes on keep-alive GET /,
our bare server and nginx side by side: the top symbols by self share of
perf's cpu-clock samples, the syscalls per request from perf stat's
tracepoint counts, and the CPU time per request over the sampled run."""

from dataclasses import dataclass
from typing import Optional

from acceptlab.results_io import RowError
from report.common import (Failed, Meta, Study, cell_text, get, get_bool, get_int, get_number, get_str, plural,
                           row_reader)


@dataclass(frozen=True)
class Profile:
    line: int
    arm: str
    workers: int
    mode: str
    path: str
    cpu_us_per_request: Optional[float]
    requests_per_s: float
    samples: Optional[int]
    user_pct: float
    kernel_samples: bool
    symbols: tuple  # ((symbol, dso, space, self %), ...), largest first
    syscalls: tuple  # ((name, per request), ...), largest first, "other" last
    syscalls_per_request: Optional[float]
    syscalls_skipped: Optional[str]
    perf: str
    software: Optional[str]


def parse_list(obj: dict, key: str) -> list:
    value = get(obj, key)
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise RowError(f'"{key}" must be a list of objects')
    return value


def parse_profile_row(obj: dict, line: int):
    arm = get_str(obj, "arm")
    if "error" in obj:
        return Failed(line, arm, str(obj["error"]))
    symbols = tuple((get_str(s, "symbol", ("symbols",)), get_str(s, "dso", ("symbols",)),
                     get_str(s, "space", ("symbols",)), get_number(s, "self_pct"))
                    for s in parse_list(obj, "symbols"))
    skipped = obj.get("syscalls_skipped")
    if skipped is not None and not isinstance(skipped, str):
        raise RowError('"syscalls_skipped" must be a string')
    if skipped is None:
        syscalls = tuple((get_str(s, "name", ("syscalls",)), get_number(s, "per_request"))
                         for s in parse_list(obj, "syscalls"))
        per_request = get_number(obj, "syscalls_per_request")
    else:
        syscalls, per_request = (), None
    software = obj.get("software")
    return Profile(line, arm, get_int(obj, "workers", 1), get_str(obj, "mode"), get_str(obj, "path"),
                   get_number(obj, "cpu_us_per_request", nullable=True), get_number(obj, "requests_per_s"),
                   obj.get("samples") if isinstance(obj.get("samples"), int) else None,
                   get_number(obj, "user_pct"), get_bool(obj, "kernel_samples"), symbols, syscalls, per_request,
                   skipped, get_str(obj, "perf"), software if isinstance(software, str) else None)


def symbol_cell(sym: tuple) -> str:
    name, dso, space, _ = sym
    where = "kernel" if space == "kernel" else dso.rsplit("/", 1)[-1]
    return f"`{cell_text(name)}` ({cell_text(where)})"


def label(p: Profile) -> str:
    return p.arm + (f" ({p.software})" if p.software else "")


def render_profile(meta: Meta, rows: list) -> list:
    profiles = [r for r in rows if isinstance(r, Profile)]
    failed = [r for r in rows if isinstance(r, Failed)]
    out = ["## Where the CPU goes: bare and nginx on keep-alive GET /", ""]
    if profiles:
        p0 = profiles[0]
        out += [f"Each server at {plural(p0.workers, 'worker')} serves wrk on keep-alive GET {p0.path} (as the "
                "cost study runs it) twice: once under `perf record -e cpu-clock -g` on its workers (the symbols, "
                "by self share of the samples, and the CPU time per request over that run), once under "
                "`perf stat` of the syscall tracepoints (each syscall's count over the requests wrk completed; "
                "\"other\": every syscall the study does not count by name).", ""]
    for f in failed:
        out.append(f"- {f.key}: {cell_text(f.error)}")
    if failed:
        out.append("")
    if not profiles:
        return out
    width = max(len(p.symbols) for p in profiles)
    out += ["**CPU and samples.**", "",
            "| | " + " | ".join(label(p) for p in profiles) + " |",
            "|---|" + "---|" * len(profiles),
            "| CPU µs per request | " + " | ".join(
                "-" if p.cpu_us_per_request is None else f"{p.cpu_us_per_request:.2f}" for p in profiles) + " |",
            "| req/s (sampled run) | " + " | ".join(f"{p.requests_per_s:.0f}" for p in profiles) + " |",
            "| samples | " + " | ".join("-" if p.samples is None else str(p.samples) for p in profiles) + " |",
            "| user-space share of samples (symbols over 0.3 %) | " + " | ".join(
                f"{p.user_pct:.1f} %" for p in profiles) + " |",
            "| syscalls per request | " + " | ".join(
                "-" if p.syscalls_per_request is None else f"{p.syscalls_per_request:.2f}" for p in profiles) + " |",
            ""]
    out += ["**Top symbols (self % of the samples).**", "",
            "| # | " + " | ".join(f"{label(p)} | %" for p in profiles) + " |",
            "|---|" + "---|---|" * len(profiles)]
    for i in range(width):
        cells = []
        for p in profiles:
            if i < len(p.symbols):
                cells += [symbol_cell(p.symbols[i]), f"{p.symbols[i][3]:.1f}"]
            else:
                cells += ["", ""]
        out.append(f"| {i + 1} | " + " | ".join(cells) + " |")
    out.append("")
    names = []
    for p in profiles:
        for name, _ in p.syscalls:
            if name not in names and name != "other":
                names.append(name)
    if any(p.syscalls for p in profiles):
        per = [dict(p.syscalls) for p in profiles]
        out += ["**Syscalls per request.**", "",
                "| syscall | " + " | ".join(label(p) for p in profiles) + " |",
                "|---|" + "---|" * len(profiles)]
        for name in names + (["other"] if any("other" in d for d in per) else []):
            out.append(f"| {name} | " + " | ".join(
                "-" if p.syscalls_skipped else f"{d.get(name, 0):.3f}" for p, d in zip(profiles, per)) + " |")
        out.append("")
    notes = [f"- {p.arm}: syscalls not counted: {cell_text(p.syscalls_skipped)}" for p in profiles
             if p.syscalls_skipped]
    notes += [f"- {p.arm}: user-space samples only (perf could not sample the kernel here)" for p in profiles
              if not p.kernel_samples]
    irq = sorted({s[0] for p in profiles for s in p.symbols[:3] if s[2] == "kernel" and "irq_enable" in s[0]})
    if irq:
        notes.append(f"- {', '.join(f'`{n}`' for n in irq)} among the top symbols. How the method attributes "
                     "samples, not a finding of this run: cpu-clock is a software event sampled from a timer "
                     "interrupt, so a sample that falls due while interrupts are off is taken when they come back "
                     "on and charged to the function that turns them on; that line holds whatever kernel work ran "
                     "with interrupts off, and its samples alone do not say which. "
                     "raw/profile-*.perf-callers.txt lists its callers.")
    per_wakeup = [(p, wait) for p in profiles for wait in [epoll_waits(p)] if wait]
    if per_wakeup:
        notes.append("- requests per epoll_wait call (the requests wrk completed over the server's `epoll_wait`, "
                     "`epoll_pwait` and `epoll_pwait2` calls that perf stat counted, one run each): "
                     + ", ".join(f"{p.arm} {1 / wait:.2f}" for p, wait in per_wakeup) + ".")
    by_arm = {p.arm: p for p in profiles}
    if "bare" in by_arm and "nginx" in by_arm:
        b, n = by_arm["bare"], by_arm["nginx"]
        if b.cpu_us_per_request and n.cpu_us_per_request:
            notes.append(f"- CPU µs per request, bare over nginx: {b.cpu_us_per_request / n.cpu_us_per_request:.2f} "
                         "(one sampled run each; the cost study's rounds give the interval).")
        if b.syscalls_per_request and n.syscalls_per_request:
            notes.append(f"- syscalls per request: bare {b.syscalls_per_request:.2f}, "
                         f"nginx {n.syscalls_per_request:.2f}.")
    if notes:
        out += ["**What this shows.**", ""] + notes + [""]
    return out


def epoll_waits(p: Profile) -> Optional[float]:
    """The server's epoll_wait calls of every kind per request (perf stat's
    counts), None when not counted."""
    if p.syscalls_skipped:
        return None
    per = dict(p.syscalls)
    return sum(per.get(n, 0) for n in ("epoll_wait", "epoll_pwait", "epoll_pwait2")) or None


def absent_profile(meta: Meta) -> list:
    return ["## Where the CPU goes: bare and nginx on keep-alive GET /", "",
            "Not measured in this run (no profile.jsonl: a run from before the profile study, or one that "
            "left it out).", ""]


read_profile = row_reader(parse_profile_row)
STUDY = Study("profile", "profile.jsonl", read_profile, render_profile,
              is_round=lambda row: isinstance(row, Profile), absent=absent_profile)
