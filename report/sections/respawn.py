"""The respawn study (respawn.jsonl): what clients see while the supervisor
replaces a SIGKILLed worker, per variant, with and without tcp_migrate_req."""

from dataclasses import dataclass
from typing import Optional

from report.common import (Failed, Meta, Study, failed_notes, get_arm, get_bool, get_int, get_number, get_opt_int,
                           is_int, plural, row_reader)


@dataclass(frozen=True)
class RespawnTrial:
    line: int
    variant: str
    migrate: bool
    trial: int
    connections: int
    answered: int
    reset: int
    timeout: int
    rebind_ms: Optional[float]
    queued_own: Optional[int] = None    # waiting at the listeners only the killed worker held, just before the kill
    queued_other: Optional[int] = None  # waiting at the other listeners (a shared one among them)


def parse_respawn_row(obj: dict, line: int):
    variant = get_arm(obj)
    migrate = get_bool(obj, "migrate")
    if "error" in obj:
        trial = obj.get("trial")
        return Failed(line, (variant, migrate), (f"trial {trial}: " if is_int(trial) else "") + str(obj["error"]))
    return RespawnTrial(line, variant, migrate, get_int(obj, "trial", 1), get_int(obj, "connections", 1),
                        get_int(obj, "answered"), get_int(obj, "reset"), get_int(obj, "timeout"),
                        get_number(obj, "rebind_ms", nullable=True), get_opt_int(obj, "queued_at_victim"),
                        get_opt_int(obj, "queued_elsewhere"))


def render_respawn(meta: Meta, rows: list) -> list:
    trials = [r for r in rows if isinstance(r, RespawnTrial)]
    failed = [r for r in rows if isinstance(r, Failed)]
    arms = []
    for r in rows:
        key = (r.variant, r.migrate) if isinstance(r, RespawnTrial) else r.key
        if key not in arms:
            arms.append(key)

    def label(key):
        return key[0] + (" + migrate" if key[1] else "")

    counted = bool(trials) and all(t.queued_own is not None for t in trials)
    out = ["## Respawn: what clients see while a worker is replaced", "",
           "Each trial runs in a network namespace of its own: 2 workers, worker 1 SIGSTOPped, "
           "a burst of connections connected and asking, then worker 1 SIGKILLed and the supervisor "
           "respawns it. Reset: connections the probe saw reset or closed unanswered; \"+ migrate\" sets "
           "net.ipv4.tcp_migrate_req=1 in the namespace (`--reuseport-migrate`). "
           + ("Queued: the connections waiting in the accept queue of a listener only the killed worker held "
              "(its own), just before the kill, from sock_diag (`ss -ltn`: a listener's Recv-Q). "
              if counted else "")
           + "Rebind: from the reap to the replacement serving, as the supervisor logs it. One cell entry per "
           "trial.", "",
           "| arm | reset / connections | " + ("queued at its own listener | " if counted else "")
           + "answered | rebind ms |", "|---|---|" + ("---|" if counted else "") + "---|---|"]
    for key in arms:
        mine = sorted((t for t in trials if (t.variant, t.migrate) == key), key=lambda t: t.trial)
        if not mine:
            continue
        out.append("| %s | %s | %s%s | %s |" % (
            label(key), " ".join(f"{t.reset}/{t.connections}" for t in mine),
            (" ".join(str(t.queued_own) for t in mine) + " | ") if counted else "",
            " ".join(str(t.answered) for t in mine),
            " ".join("-" if t.rebind_ms is None else f"{t.rebind_ms:.2f}" for t in mine)))
    out.append("")
    lines = []
    for key in arms:
        mine = [t for t in trials if (t.variant, t.migrate) == key]
        if mine:
            reset = sum(t.reset for t in mine)
            total = sum(t.connections for t in mine)
            lost = sum(t.connections - t.answered - t.reset for t in mine)
            text = (f"- {label(key)}: {reset} of {total} connections reset over {plural(len(mine), 'trial')}"
                    + (f"; {lost} neither answered nor reset" if lost else ""))
            if counted:
                queued = sum(t.queued_own for t in mine)
                same = sum(t.reset == t.queued_own for t in mine)
                text += (f"; {queued} waited at the killed worker's own listener" if queued else
                         "; none waited at a listener of the killed worker's own")
                if queued:
                    text += (f", and the resets equal them in {same} of {plural(len(mine), 'trial')}"
                             if reset else ", and none of them was reset")
            lines.append(text + ".")
    out += ["**What this shows.**", ""] + lines + (failed_notes(failed, label) or [""])
    return out


read_respawn = row_reader(parse_respawn_row)
STUDY = Study("respawn", "respawn.jsonl", read_respawn, render_respawn,
              is_round=lambda row: isinstance(row, RespawnTrial))
