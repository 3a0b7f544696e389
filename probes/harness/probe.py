"""probe: bin/acceptlab-probe run against a server: its command (probe_cmd),
run and saved under raw/ (run_probe, save_probe), its rounds read back
(probe_rounds) and shown (split_text)."""

import json
import os
import subprocess

from acceptlab.paths import ROOT
from probes.harness.lifecycle import StepFailed

PROBE = os.path.join(ROOT, "bin", "acceptlab-probe")
PROBE_TIMEOUT_S = 120


def probe_cmd(port, shape, rounds, ready_path, extra=(), host="127.0.0.1"):
    cmd = [PROBE, "--target", "%s:%d" % (host, port), "--shape", shape["name"],
           "--connections", str(shape["connections"]), "--rounds", str(rounds),
           "--workers-from", ready_path, "--json", *extra]
    if "gap_ms" in shape:
        cmd += ["--gap-ms", str(shape["gap_ms"])]
    if "requests" in shape:
        cmd += ["--requests", str(shape["requests"])]
    return cmd


def save_probe(prefix, cmd, res):
    with open(prefix + ".probe.cmd", "w") as f:
        f.write(" ".join(cmd) + "\n")
    with open(prefix + ".probe.jsonl", "w") as f:
        f.write(res.stdout)
    with open(prefix + ".probe.stderr", "w") as f:
        f.write(res.stderr)


def run_probe(prefix, cmd, rounds):
    """Runs the probe; returns its round objects (exit 1, a measured failure
    such as an unanswered connection, is data, not an error)."""
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise StepFailed("probe did not finish within %d s" % PROBE_TIMEOUT_S)
    save_probe(prefix, cmd, res)
    return probe_rounds(res, rounds)


def probe_rounds(res, rounds):
    if res.returncode not in (0, 1):
        raise StepFailed("probe exited %d: %s" % (res.returncode, res.stderr.strip()[-200:]))
    out = []
    for line in res.stdout.splitlines():
        obj = json.loads(line)
        if obj.pop("type") == "round":
            out.append(obj)
    if len(out) != rounds:
        raise StepFailed("probe reported %d rounds, expected %d" % (len(out), rounds))
    return out


def split_text(rows):
    """The rounds' splits, one after another ("!" marks a round with an unanswered connection)."""
    return " ".join(r["split"] + ("!" if r.get("unanswered") else "") for r in rows)
