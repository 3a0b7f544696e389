"""models: `-m models.skew campaign` (reuseport-model and exclusive-model
measured, the analytic and simulated predictions, each row predicted vs
measured) -> models.jsonl. It reads this run's balancing.jsonl and
trace.jsonl when they are there (the balancing study runs first)."""

import json
import os
import subprocess

from acceptlab.paths import module_cmd
from probes.harness.lifecycle import StepFailed

NAME = "models"


def arms_of(plan):
    """None: the models run the mechanism models, not the table's servers."""
    return []


def meta(plan):
    return {}


def steps(plan, raw_dir):
    def step():
        run_dir = os.path.dirname(raw_dir)
        out = os.path.join(raw_dir, "models")
        cmd = module_cmd("models.skew", "campaign", "--out", out) + (["--quick"] if plan.quick else [])
        for name, flag in (("balancing.jsonl", "--balancing"), ("trace.jsonl", "--trace")):
            if os.path.exists(os.path.join(run_dir, name)):
                cmd += [flag, os.path.join(run_dir, name)]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            raise StepFailed("models did not finish within 600 s")
        with open(os.path.join(raw_dir, "models.stdout"), "w") as f:
            f.write(res.stdout)
        with open(os.path.join(raw_dir, "models.stderr"), "w") as f:
            f.write(res.stderr)
        if res.returncode != 0:
            raise StepFailed("models.skew campaign exited %d: %s"
                             % (res.returncode, " ".join(res.stderr.split())[-200:]))
        with open(os.path.join(out, "models.jsonl")) as f:
            rows = [json.loads(l) for l in f if l.strip()]
        return rows, "%d model rows" % len(rows)
    yield "skew.py campaign%s" % (" --quick" if plan.quick else ""), step, {"model": None}
