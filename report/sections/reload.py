"""The reload study (reload.jsonl): what clients see while every worker is
replaced on SIGHUP, per variant, and which arms must lose no request."""

from dataclasses import dataclass

from acceptlab.results_io import RowError, json_kind
from report.common import Failed, Meta, Study, failed_notes, get, get_arm, get_bool, get_int, is_int, plural, row_reader


RELOAD_LOADS = (("keepalive", "keep-alive"), ("close", "Connection: close"))


@dataclass(frozen=True)
class ReloadTrial:
    line: int
    variant: str
    migrate: bool
    spawn: bool
    reloads: int
    replaced: int
    reload_ms: tuple
    requests: dict   # load -> requests wrk completed
    errors: dict     # load -> {kind: count}

    @property
    def failed(self) -> int:
        return sum(sum(e.values()) for e in self.errors.values())


def parse_reload_row(obj: dict, line: int):
    variant = get_arm(obj)
    migrate, spawn = get_bool(obj, "migrate"), get_bool(obj, "spawn")
    if "error" in obj:
        return Failed(line, (variant, migrate, spawn), str(obj["error"]))
    ms = get(obj, "reload_ms")
    if not isinstance(ms, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
                                          for v in ms):
        raise RowError('"reload_ms" must be a list of numbers >= 0')
    requests, errors = {}, {}
    for load, _ in RELOAD_LOADS:
        part = get(obj, load)
        if not isinstance(part, dict):
            raise RowError(f'"{load}" must be an object, got {json_kind(part)}')
        requests[load] = get_int(part, "requests", where=(load,))
        errors[load] = _reload_errors(part, load)
    row = ReloadTrial(line, variant, migrate, spawn, get_int(obj, "reloads"), get_int(obj, "replaced"),
                      tuple(ms), requests, errors)
    if get_int(obj, "failed") != row.failed:
        raise RowError(f'"failed" is {obj["failed"]}, but the errors add up to {row.failed}')
    return row


def _reload_errors(part: dict, load: str) -> dict:
    value = get(part, "errors", (load,))
    if not isinstance(value, dict) or not all(is_int(n) and n >= 0 for n in value.values()):
        raise RowError(f'"{load}.errors" must be an object of integers >= 0')
    return dict(value)


def reload_label(key) -> str:
    variant, migrate, spawn = key
    return variant + (" + migrate" if migrate else "") + (" (spawned workers)" if spawn else "")


def render_reload(meta: Meta, rows: list) -> list:
    # What the reload must do, by arm, as the run recorded it (meta.json
    # "arms", reload_loses_none): the shared listener never closes, and
    # fdpass's leaver forwards what reaches it, so these must lose nothing;
    # reuseport's old listener closes with its worker (reported, not held).
    must_lose_none = meta.arm_facts.where("reload_loses_none")
    trials = [r for r in rows if isinstance(r, ReloadTrial)]
    failed = [r for r in rows if isinstance(r, Failed)]
    out = ["## Reload: what clients see while every worker is replaced", "",
           "Each trial runs in a network namespace of its own with 2 workers: wrk keep-alive and wrk "
           "`Connection: close` ask `/pid` at once while the server gets SIGHUP several times. A reload "
           "replaces every worker one at a time: the new one serves before the old one stops taking "
           "connections; the old one answers each open connection's next request with `Connection: close` "
           "and exits when none is left. Failed: wrk's connect, read, write and timeout errors plus non-2xx "
           "answers. \"+ migrate\" sets net.ipv4.tcp_migrate_req=1 in the namespace (`--reuseport-migrate`); "
           "spawned workers are fork+exec of the server (`--spawn-workers`), so a reload starts new code.", "",
           "| arm | reloads | workers replaced | keep-alive requests | close requests | failed | "
           "errors | reload ms | must lose none |",
           "|---|---|---|---|---|---|---|---|---|"]
    for t in trials:
        kinds = ", ".join(f"{load} {kind} {n}" for load, _ in RELOAD_LOADS
                          for kind, n in sorted(t.errors[load].items()) if n) or "none"
        must = t.variant in must_lose_none
        out.append("| %s | %d | %d | %d | %d | %d | %s | %s | %s |" % (
            reload_label((t.variant, t.migrate, t.spawn)), t.reloads, t.replaced, t.requests["keepalive"],
            t.requests["close"], t.failed, kinds, " ".join(f"{v:.1f}" for v in t.reload_ms) or "-",
            ("yes: " + ("held" if t.failed == 0 else "**NOT HELD**")) if must else "no (reported)"))
    out.append("")
    lines = []
    held = [t for t in trials if t.variant in must_lose_none]
    if held:
        bad = [t for t in held if t.failed]
        lines.append(f"- Shared listener and fdpass: {len(held) - len(bad)} of {plural(len(held), 'trial')} "
                     "lost no request" + (": " + ", ".join(f"{reload_label((t.variant, t.migrate, t.spawn))} "
                                                          f"lost {t.failed}" for t in bad) if bad else "") + ".")
    for t in trials:
        if t.variant not in must_lose_none:
            lines.append(f"- {reload_label((t.variant, t.migrate, t.spawn))}: {t.failed} failed of "
                         f"{t.requests['keepalive'] + t.requests['close']} requests over "
                         f"{plural(t.reloads, 'reload')}.")
    out += ["**What this shows.**", ""] + lines + (failed_notes(failed, reload_label) or [""])
    return out


def render_reload_absent(meta: Meta) -> list:
    return ["## Reload", "", "Not measured in this run: it has no `reload.jsonl` (the campaign's `reload` "
            "study writes it).", ""]


read_reload = row_reader(parse_reload_row)
STUDY = Study("reload", "reload.jsonl", read_reload, render_reload,
              is_round=lambda row: isinstance(row, ReloadTrial), absent=render_reload_absent)
