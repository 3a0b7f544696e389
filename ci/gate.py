"""gate.py: `make gate`, the CI gate on balance.

The variants that claim balance (fdpass, reuseport-bpf, and handoff with its
default policy, open, in threads mode) run the balancing study's shapes (16
connections per worker: burst 32, ramp 32 and keepalive 32 x 4 at 2 workers),
two rounds each, at each worker count of --workers (default 2,4,8): at 2 on
a fresh server per shape, then at every count back-to-back on one server
(the shapes one after another, no pause between rounds), then the same
beside two CPU hogs (stress-ng --cpu 2).

Every round is judged against the arms' own target (servers/load.h, the
acceptlab/balance.py's within_target): 17/15 at 2 workers, max - min <= 2 at
more, with nothing unanswered; the design notes' 2:1 (max/min <= 2) is
printed beside it. The target is kernel accounting's: a server that counts
load in user space (not root) is held to 2:1 instead, and its line says so.
The knob-off arms (fdpass with ACCEPTLAB_ACCEPT_SHARE=0, the bare race;
handoff with --handoff-policy off, plain reuseport) are printed beside them
and not asserted: on Linux the race is not deterministic.

Then the fault invariants of accept sharing (the fault tests in
tests/test_fdpass.py). As root every one of them can run, so a skipped one
is a failure, named; without root a skip is printed with its reason.

Ends with one line "gate: N passed, N failed"; exit 1 if anything failed,
2 on bad usage.
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("gate.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m ci.gate\n")
    sys.exit(2)

import argparse
import os
import shutil
import signal
import subprocess
import tempfile
import xml.etree.ElementTree as ET

from acceptlab import arms  # (the arms: which claim balance, their knob-off arms)
from acceptlab import balance  # (the target and the 2:1 bar)
from acceptlab.paths import ROOT
from probes.harness import cpu, lifecycle, probe, servers
from probes.studies.balancing import PER_WORKER, shapes_for, shape_label, worker_counts

# The arms that claim balance (arms.py). handoff's written policy is not
# among them: it misses 2:1 (the campaign's balancing table says by how
# much); the default policy (open) holds.
BALANCING_SET = arms.claiming_balance()
NEEDS_ROOT = arms.needing_root()
ROUNDS = 2
WORKERS = [2, 4, 8]   # --workers' default
FRESH_WORKERS = 2     # the count that also gets a fresh server per shape, and the knob-off arms
# The fault invariants: pytest's arguments, from the repository's root.
FAULT_TESTS = [os.path.join("tests", "test_fdpass.py"), "-k", "fault"]
FAULT_TIMEOUT_S = 600


def target_text(workers):
    """The claiming arms' target at a worker count, in words: at 2 workers
    the worst split it allows (17/15 of 32), above it max - min <= 2."""
    if workers == 2:
        n = PER_WORKER * workers
        return "every round within %s (max - min <= %d), nothing unanswered" % (
            balance.worst_split_on_target(n), balance.TARGET_SPREAD)
    return "every round max - min <= %d (%d connections), nothing unanswered" % (balance.TARGET_SPREAD,
                                                                                PER_WORKER * workers)


def on_target(row, workers):
    """One round against the target (servers/load.h, acceptlab/balance.py)."""
    return row["unanswered"] == 0 and balance.within_target(list(row["counts"].values()), workers)


def within_2to1(row):
    """One round against the design notes' 2:1 (a worker with none is infinite)."""
    return row["unanswered"] == 0 and balance.ratio_within_2to1(row["ratio"])


def held_to(ready):
    """The bar a server's rounds are held to: "target", or "2:1" for a
    server that counts load in user space without root (its ready line's
    accounting): the target is kernel accounting's (tests/test_balance.py)."""
    if ready.get("accounting") == "user" and os.geteuid() != 0:
        return "2:1"
    return "target"


def verdict_text(rows, workers, held):
    """The rounds' verdict on both bars, the held one first: "target ok
    (2:1: within)", "TARGET MISSED (2:1: outside)", "within 2:1 (target:
    missed, not held: user accounting)"."""
    target = all(on_target(r, workers) for r in rows)
    seeds = all(within_2to1(r) for r in rows)
    if held == "target":
        return "%s  (2:1: %s)" % ("target ok" if target else "TARGET MISSED", "within" if seeds else "outside")
    return "%s  (target: %s, not held: user accounting)" % ("within 2:1" if seeds else "OUTSIDE 2:1",
                                                            "met" if target else "missed")


def measure(server_args, env, shape, raw_dir, tag):
    """Runs ROUNDS rounds of shape on a fresh server at FRESH_WORKERS:
    returns (the round rows, the bar they are held to)."""
    prefix = os.path.join(raw_dir, "%s-%s" % (tag, shape["name"]))
    with servers.ServerRun(server_args, FRESH_WORKERS, prefix, env=env) as (_, ready, path):
        cmd = probe.probe_cmd(ready["port"], shape, ROUNDS, path)
        return probe.run_probe(prefix, cmd, ROUNDS), held_to(ready)


def measure_back_to_back(server_args, env, raw_dir, tag, workers):
    """ROUNDS rounds of every shape on ONE server of `workers` workers, no
    pause between rounds or shapes: ({shape name: round rows}, the bar)."""
    out = {}
    with servers.ServerRun(server_args, workers, os.path.join(raw_dir, tag), env=env) as (_, ready, path):
        for shape in shapes_for(workers):
            prefix = os.path.join(raw_dir, "%s-%s" % (tag, shape["name"]))
            cmd = probe.probe_cmd(ready["port"], shape, ROUNDS, path, extra=["--round-gap-ms", "0"])
            out[shape["name"]] = probe.run_probe(prefix, cmd, ROUNDS)
    return out, held_to(ready)


def gate_rounds(label, rows, workers, held):
    """Prints one gate line; returns (passed, failed) by the held bar."""
    ok = [on_target(r, workers) if held == "target" else within_2to1(r) for r in rows]
    print("gate: %s %s  %s" % (label, " ".join(r["split"] for r in rows), verdict_text(rows, workers, held)),
          flush=True)
    return sum(ok), len(ok) - sum(ok)


def run_back_to_back(variant, raw_dir, hogs, workers):
    """The back-to-back rounds at `workers` workers, beside two CPU hogs when
    hogs: (passed, failed). Without stress-ng the hogs' rounds are skipped
    with the reason when not root; as root `make deps` installs it, so its
    absence is a failure."""
    passed = failed = 0
    when = "%dw %s" % (workers, "hogs" if hogs else "back-to-back")
    tag = "%s-w%d-%s" % (variant, workers, "hogs" if hogs else "back-to-back")
    if hogs and not shutil.which("stress-ng") and os.geteuid() != 0:
        print("gate: %-14s %-30s skipped: stress-ng is missing (make deps installs it, as root)"
              % (variant, when), flush=True)
        return 0, 0
    try:
        if hogs:
            with cpu.StressHogs(2):
                got, held = measure_back_to_back(arms.server_args(variant), arms.env(variant), raw_dir, tag,
                                                 workers)
        else:
            got, held = measure_back_to_back(arms.server_args(variant), arms.env(variant), raw_dir, tag, workers)
    except lifecycle.StepFailed as e:
        print("gate: %-14s %-30s FAILED: %s" % (variant, when, e), flush=True)
        return 0, 1
    for shape in shapes_for(workers):
        label = "%-14s %-30s" % (variant, "%s %s" % (when, shape_label(shape)))
        p, f = gate_rounds(label, got[shape["name"]], workers, held)
        passed += p
        failed += f
    return passed, failed


def fault_outcomes(junit_xml):
    """[(test, outcome, message)] from pytest's JUnit XML: outcome
    "passed", "failed" (a failure or an error, in any phase) or "skipped"
    (message: the reason)."""
    out = []
    for case in ET.fromstring(junit_xml).iter("testcase"):
        name = "%s::%s" % (case.get("classname", ""), case.get("name", ""))
        bad = [c for c in case if c.tag in ("failure", "error")]
        skipped = [c for c in case if c.tag == "skipped"]
        if bad:
            out.append((name, "failed", bad[0].get("message", "")))
        elif skipped:
            out.append((name, "skipped", skipped[0].get("message", "")))
        else:
            out.append((name, "passed", ""))
    return out


def judge_faults(outcomes, root):
    """(passed, failed, lines) for the fault tests' outcomes. As root every
    fault test can run, so a skipped one is a failure (a case whose window
    was never tried); without root a skip is reported with its reason.
    No fault test at all is a failure too."""
    passed = sum(1 for _, o, _ in outcomes if o == "passed")
    failed, lines = 0, []
    for name, outcome, message in outcomes:
        if outcome == "failed":
            failed += 1
            lines.append("gate:   FAILED %s: %s" % (name, message.splitlines()[0][:200] if message else ""))
        elif outcome == "skipped" and root:
            failed += 1
            lines.append("gate:   SKIPPED as root (a failure): %s: %s" % (name, message))
        elif outcome == "skipped":
            lines.append("gate:   skipped (not root): %s: %s" % (name, message))
    if not outcomes:
        failed += 1
        lines.append("gate:   no fault test ran")
    return passed, failed, lines


def stop_pytest(proc, grace_s=30):
    """Stops a pytest run started in a session of its own while it runs:
    SIGINT first, so its fixtures stop the servers they started, then
    SIGKILL to its group if it has not exited (its leader still running, so
    the group is still its own)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.communicate(timeout=grace_s)  # read what it says, so a full pipe cannot hold it
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    lifecycle.forget(proc)


def run_faults(selection=None, root=None):
    """The fault invariants: pytest on selection (default FAULT_TESTS), read
    from its JUnit XML; prints a line per failed or skipped test and returns
    (passed, failed). root: whether to judge as root (default: geteuid)."""
    root = os.geteuid() == 0 if root is None else root
    with tempfile.TemporaryDirectory(prefix="acceptlab-gate-faults-") as tmp:
        xml_path = os.path.join(tmp, "faults.xml")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=short",
               "--junitxml", xml_path, *(FAULT_TESTS if selection is None else selection)]
        with lifecycle.registering():
            proc = lifecycle.register(subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE,
                                                     stderr=subprocess.STDOUT, text=True,
                                                     start_new_session=True), stop_pytest)
        try:
            out, _ = proc.communicate(timeout=FAULT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            stop_pytest(proc)
            print("gate:   the fault tests did not finish within %d s" % FAULT_TIMEOUT_S, flush=True)
            return 0, 1
        lifecycle.forget(proc)  # it has exited
        try:
            with open(xml_path) as f:
                outcomes = fault_outcomes(f.read())
        except (OSError, ET.ParseError) as e:
            print("gate:   pytest exited %d without a readable report (%s): %s"
                  % (proc.returncode, e, out.strip()[-500:]), flush=True)
            return 0, 1
    passed, failed, lines = judge_faults(outcomes, root)
    if proc.returncode not in (0, 1, 5) and not failed:
        failed = 1  # pytest itself went wrong (an internal or usage error)
        lines.append("gate:   pytest exited %d: %s" % (proc.returncode, out.strip()[-500:]))
    for line in lines:
        print(line, flush=True)
    return passed, failed


def main():
    ap = argparse.ArgumentParser(description="The CI gate: the variants that claim balance held to their "
                                             "target (the design notes' 2:1 beside it), the fault invariants.")
    ap.add_argument("--arms", default=",".join(BALANCING_SET),
                    help="arms to hold to the target (default: %(default)s)")
    ap.add_argument("--variants", nargs="?", const="", help=argparse.SUPPRESS)  # the old name: exit 2, saying so
    ap.add_argument("--workers", default=",".join(map(str, WORKERS)),
                    help="worker counts, comma-separated (default %(default)s): every count back-to-back and "
                         "beside hogs; " + str(FRESH_WORKERS) + " also on a fresh server per shape, with the knob-off arms")
    ap.add_argument("--no-faults", action="store_true", help="skip the fault invariants")
    ap.add_argument("--no-knob-off", action="store_true", help="skip the knob-off arm's figures")
    args = ap.parse_args()
    if args.variants is not None:
        print("gate: --variants was renamed --arms", file=sys.stderr)
        return 2
    variants = [v for v in args.arms.split(",") if v]
    unknown = [v for v in variants if v not in arms.names()]
    if unknown or not variants:
        print("gate: --arms %s: unknown" % (",".join(unknown) or "(empty)"), file=sys.stderr)
        return 2
    try:
        counts = worker_counts(args.workers)
    except ValueError as e:
        print("gate: --workers %s: %s" % (args.workers, e), file=sys.stderr)
        return 2
    print("gate: worker counts %s" % ", ".join(map(str, counts)), flush=True)
    for workers in counts:
        print("gate: target at %d workers: %s; the design notes' 2:1 (max/min <= 2) beside it"
              % (workers, target_text(workers)), flush=True)

    passed = failed = 0
    raw_dir = tempfile.mkdtemp(prefix="acceptlab-gate-")
    try:
        for variant in variants:
            if variant in NEEDS_ROOT and os.geteuid() != 0:
                print("gate: %-14s skipped: needs root (CAP_BPF)" % variant, flush=True)
                continue
            for shape in shapes_for(FRESH_WORKERS) if FRESH_WORKERS in counts else []:
                label = "%-14s %-16s" % (variant, shape_label(shape))
                try:
                    rows, held = measure(arms.server_args(variant), arms.env(variant), shape,
                                         raw_dir, variant)
                except lifecycle.StepFailed as e:
                    failed += 1
                    print("gate: %s FAILED: %s" % (label, e), flush=True)
                    continue
                p, f = gate_rounds(label, rows, FRESH_WORKERS, held)
                passed += p
                failed += f
            for workers in counts:
                for hogs in (False, True):
                    p, f = run_back_to_back(variant, raw_dir, hogs, workers)
                    passed += p
                    failed += f
        for name in [] if args.no_knob_off or FRESH_WORKERS not in counts else [
                arms.get(v).knob_off for v in variants if arms.get(v).knob_off]:
            for shape in shapes_for(FRESH_WORKERS):
                try:
                    rows, _ = measure(arms.server_args(name), arms.env(name), shape, raw_dir, name)
                    figures = "%s  (reported, not asserted; target: %s, 2:1: %s)" % (
                        " ".join(r["split"] for r in rows),
                        "met" if all(on_target(r, FRESH_WORKERS) for r in rows) else "missed",
                        "within" if all(within_2to1(r) for r in rows) else "outside")
                except lifecycle.StepFailed as e:
                    figures = "failed: %s  (reported, not asserted)" % e
                print("gate: %-14s %-16s %s" % (name, shape_label(shape), figures), flush=True)
        if not args.no_faults:
            fp, ff = run_faults()
            print("gate: fault invariants: %d passed, %d failed" % (fp, ff), flush=True)
            passed += fp
            failed += ff
    finally:
        lifecycle.stop_all()
    if failed:
        print("gate: the servers' and probes' raw output is kept in %s" % raw_dir)
    else:
        shutil.rmtree(raw_dir, ignore_errors=True)
    print("gate: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
