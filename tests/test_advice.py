"""report/advice.tsv: what bin/acceptlab-diagnose advises, checked against
the run it quotes.

The diagnosis prints these lines to users as advice, so every figure in
them must be the run's: each "measured" and "alternative" line's rounds
within 2:1 (per shape and in all) are recounted here from the run's raw
balancing rows with acceptlab/balance.py's 2:1 rule, and each "cost" line's
CPU ratios are recomputed from the raw cost rows with acceptlab/stats.py's
mean and interval, independently of report/advice.py's readers. The check
also runs on a planted wrong figure, so it is known to fail. The file's
shape (a `# run STAMP` line naming the CANONICAL run, four tab-separated
fields, a known kind) is what the diagnosis parses.
"""

import json
import re
from pathlib import Path

import pytest

from acceptlab import balance
from acceptlab.stats import mean_interval

REPO = Path(__file__).resolve().parent.parent
ADVICE = REPO / "report" / "advice.tsv"
RESULTS = REPO / "results" / "linux"
KINDS = {"measured", "alternative", "cost", "setting"}

WITHIN_RE = re.compile(r"(?P<arm>[a-z][a-z0-9-]*) \([^()]*(?:\([^()]*\)[^()]*)*\) kept every worker within 2:1 in "
                       r"(?P<held>\d+) of (?P<total>\d+) rounds? \((?P<shapes>[^)]*)\)")
COST_RE = re.compile(r"(?P<arm>[a-z][a-z0-9-]*) (?P<mean>\d+\.\d\d)(?: ± (?P<half>\d+\.\d\d))?")


def canonical():
    return (RESULTS / "CANONICAL").read_text().strip()


def raw_rows(name):
    path = RESULTS / canonical() / name
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def arm_of(row):
    return row.get("arm", row.get("variant"))


def recount(rows, arm, workers):
    """{shape: (within, total)} of the measured rounds of arm at workers."""
    out = {}
    for r in rows:
        if arm_of(r) != arm or r.get("workers") != workers or r.get("round") is None or "counts" not in r:
            continue
        held, total = out.get(r["shape"], (0, 0))
        out[r["shape"]] = (held + balance.within_2to1(list(r["counts"].values()), workers), total + 1)
    return out


def cost_figure(rows, arm, mode):
    values = [r["cpu_ratio_to_bare"] for r in rows
              if r.get("arm") == arm and r.get("mode") == mode and r.get("cpu_ratio_to_bare") is not None]
    m, half = mean_interval(values)
    return "%.2f" % m if half is None else "%.2f ± %.2f" % (m, half)


def problems(lines, balancing, costs):
    """Every figure of the advice lines that the raw rows do not give."""
    bad = []
    for variant, workers, kind, text in lines:
        workers = int(workers)
        if kind in ("measured", "alternative"):
            m = WITHIN_RE.search(text)
            if not m:
                bad.append("%s %d %s: no 'within 2:1' figure: %s" % (variant, workers, kind, text))
                continue
            got = recount(balancing, m["arm"], workers)
            want_shapes = ", ".join("%s %d of %d" % (s, h, t) for s, (h, t) in got.items())
            said = dict((p.split(" ", 1)[0], p.split(" ", 1)[1]) for p in m["shapes"].split(", "))
            real = {s: "%d of %d" % ht for s, ht in got.items()}
            if said != real or int(m["held"]) != sum(h for h, _ in got.values()) \
                    or int(m["total"]) != sum(t for _, t in got.values()):
                bad.append("%s at %d: says %s of %s (%s), the rows give %s" % (
                    m["arm"], workers, m["held"], m["total"], m["shapes"], want_shapes))
        elif kind == "cost":
            mode = "keepalive" if "keep-alive" in text else "close"
            body = text.split("): ", 1)[1]
            for m in COST_RE.finditer(body):
                figure = m["mean"] + (" ± " + m["half"] if m["half"] else "")
                want = cost_figure(costs, m["arm"], mode)
                if figure != want:
                    bad.append("%s %s: says %s, the rows give %s" % (m["arm"], mode, figure, want))
    return bad


def advice_lines():
    text = ADVICE.read_text(encoding="utf-8")
    first = text.splitlines()[0]
    assert first == "# run " + canonical(), "report/advice.tsv names %r, not the CANONICAL run" % first
    lines = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            continue
        fields = line.split("\t")
        assert len(fields) == 4, "report/advice.tsv:%d: %d fields, not 4" % (n, len(fields))
        assert fields[1].isdigit() and fields[2] in KINDS and fields[3].strip(), "report/advice.tsv:%d: %r" % (n, line)
        lines.append(tuple(fields))
    return lines


def test_advice_figures_are_the_runs():
    lines = advice_lines()
    assert {k for _, _, k, _ in lines} == KINDS, "some kind of advice is missing"
    variants = {v for v, _, _, _ in lines}
    assert {"bare", "exclusive-reorder", "reuseport", "mutex", "fdpass"} <= variants, variants
    bad = problems(lines, raw_rows("balancing.jsonl"), raw_rows("cost.jsonl"))
    assert not bad, "\n".join(bad)


def test_the_check_finds_a_planted_wrong_figure():
    lines = advice_lines()
    measured = next(i for i, l in enumerate(lines) if l[2] == "measured")
    v, w, k, text = lines[measured]
    m = WITHIN_RE.search(text)
    wrong = text.replace("in %s of %s" % (m["held"], m["total"]), "in %d of %s" % (int(m["held"]) + 1, m["total"]), 1)
    cost = next(i for i, l in enumerate(lines) if l[2] == "cost")
    cv, cw, ck, ctext = lines[cost]
    cwrong = re.sub(r"(\d+\.\d\d)", lambda x: "%.2f" % (float(x.group(1)) + 0.01), ctext.split("): ", 1)[1], count=1)
    planted = [(v, w, k, wrong), (cv, cw, ck, ctext.split("): ", 1)[0] + "): " + cwrong)]
    assert len(problems(planted, raw_rows("balancing.jsonl"), raw_rows("cost.jsonl"))) == 2


@pytest.mark.parametrize("variant", ["bare", "reuseport", "mutex"])
def test_every_measured_count_has_settings(variant):
    """Each mechanism's advice at each measured worker count ends with the
    settings that change it in known servers."""
    lines = advice_lines()
    counts = {w for v, w, k, _ in lines if v == variant and k == "measured"}
    assert counts, "no measured line for %s" % variant
    for w in counts:
        assert any(v == variant and x == w and k == "setting" for v, x, k, _ in lines), (variant, w)
