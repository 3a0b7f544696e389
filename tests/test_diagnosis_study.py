"""The diagnosis study (probes/studies/diagnosis.py) and its report section
(report/sections/diagnosis.py): its quick slice diagnoses bare and reuseport
at 2 workers and nginx's default configuration, active and passive, each row
beside the server's own record, and leaves nothing running; the section
renders a table from hand-written rows, counts the matches and names every
mismatch; the study's expectations are tests/test_diagnose.py's."""

import json
import os
import shutil
import subprocess


from acceptlab import arms
from acceptlab.paths import module_cmd
from probes import campaign
from probes.studies import diagnosis
from tests import test_diagnose
from tests.conftest import ROOT, alive

CAMPAIGN = module_cmd("probes.campaign")
REPORT = module_cmd("report.report")
FIXTURE_META = os.path.join(ROOT, "tests", "fixtures", "report", "results", "linux", "20261129T081500Z", "meta.json")
ROW_KEYS = {"server", "ours", "software", "setting", "configuration", "workers", "connections", "mode", "load",
            "listener", "listeners", "wait", "selector", "handoff", "closest_variant", "per_worker", "split",
            "within_2to1", "fair_chance", "expected", "truth", "truth_source", "truth_ids", "truth_split",
            "served", "served_matches_truth", "mechanism_matches", "diagnose_exit"}



def test_quick_slice_rows_and_section(tmp_path):
    """--quick: bare and reuseport at 2 workers and nginx-default (or its
    unavailable row), each active and passive. As root every row names the
    mechanism as configured and every worker's served count equals the
    truth (the /pid answers; nginx's access log), the truth adds up to the
    connections sent, and the report's section has the table and the count;
    no server or diagnosis outlives the study. Not root: every row is
    skipped, saying why."""
    res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--quick", "--studies", "diagnosis",
                          "--results-dir", str(tmp_path), "--no-canonical"], cwd=ROOT, capture_output=True,
                         text=True, timeout=240)
    assert res.returncode == 0, res.stderr
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    rows = [json.loads(l) for l in (run / "diagnosis.jsonl").read_text().splitlines()]
    meta = json.loads((run / "meta.json").read_text())["parameters"]["diagnosis"]
    assert meta["arms"] == ["bare", "reuseport"] and meta["workers"] == [2] and meta["peers"] == ["nginx-default"]
    if os.geteuid() != 0:
        assert rows and all(r["error"].startswith("skipped: needs root") for r in rows), rows
        return
    nginx = [r for r in rows if r["server"] == "nginx-default"]
    if nginx and nginx[0].get("kind") == "unavailable":
        assert nginx[0]["reason"], nginx
        rows = [r for r in rows if r is not nginx[0]]
        servers = ["bare", "reuseport"]
    else:
        servers = ["bare", "reuseport", "nginx-default"]
    assert [(r["server"], r["mode"]) for r in rows] == [(s, m) for s in servers for m in ("active", "passive")]
    for r in rows:
        assert "error" not in r, r
        assert ROW_KEYS <= set(r), sorted(ROW_KEYS - set(r))
        assert r["workers"] == 2 and r["connections"] == 32 and r["traced"] is True and not r["partial"], r
        assert r["mechanism_matches"] and r["mismatched"] == [], r
        assert {k: r[k] for k in diagnosis.FIELDS} == r["expected"]
        assert r["served_matches_truth"] and r["served"] == r["truth"], (r["served"], r["truth"])
        assert sum(r["truth"].values()) == r["connections"]
        assert r["split"] == r["truth_split"]
        assert sum(w["served"] for w in r["per_worker"] if w["served"]) == r["connections"]
        assert r["diagnose_exit"] == 0
        if r["server"] == "nginx-default":
            assert r["truth_source"] == "nginx access log $pid" and r["truth_ids"] == "pid"
            assert "accept_mutex off;" in r["configuration"]
        else:
            assert r["truth_source"] == "/pid answers" and r["ours"] is True
    active = [r for r in rows if r["mode"] == "active"]
    assert all(r["load"] == "burst" for r in active)
    passive = [r for r in rows if r["mode"] == "passive"]
    assert all(r["load"] is None and r["probe_s"] <= r["duration_s"] for r in passive), passive
    # the active diagnosis of our servers read /pid's answers through the test switch
    cmd = (run / "raw" / "diagnosis-bare-w2.active.diagnose.cmd").read_text()
    assert "--request /pid" in cmd and diagnosis.TEST_SWITCH in cmd
    if "nginx-default" in servers:  # nginx: GET /, no switch; its access log is the truth
        cmd = (run / "raw" / "diagnosis-nginx-default.active.diagnose.cmd").read_text()
        assert "--request" not in cmd and diagnosis.TEST_SWITCH not in cmd
    # nothing outlives the study: our servers, nginx's workers, the diagnoses
    pids = [w["pid"] for r in rows for w in r["per_worker"]]
    for ready in (run / "raw").glob("*.ready"):
        pids += [w["pid"] for w in json.loads(ready.read_text())["workers"]]
    assert not [p for p in set(pids) if alive(p)], "a server outlived the study"
    ports = {str(json.loads(l)["port"]) for f in (run / "raw").glob("*.diagnose.jsonl")
             for l in f.read_text().splitlines()[:1]}
    left = [p for p in os.listdir("/proc") if p.isdigit() and alive(int(p)) and _diagnosing(p, ports)]
    assert not left, "a diagnosis outlived the study: %s" % left
    # the report's section
    out = tmp_path / "r.md"
    rep = subprocess.run([*REPORT, "--results-dir", str(tmp_path), "--out", str(out), "--run", run.name], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert rep.returncode == 0, rep.stderr
    text = out.read_text()
    assert "## The diagnosis against each server's own record" in text
    for r in rows:
        assert ("| %s | 2 | %s | %s | " % (r["server"], r["setting"], r["mode"])) in text
        assert ("| %s | %s | %s | %s | yes |" % (r["expected"]["closest_variant"], r["split"], r["split"],
                                                 r["truth_source"])) in text
    n = len(rows)
    assert ("%d of %d diagnoses match the server's own record: the mechanism as configured in %d of %d, every "
            "worker's served count equal to the truth in %d of %d." % (n, n, n, n, n, n)) in " ".join(text.split())


def _diagnosing(pid, ports):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            argv = f.read().decode(errors="replace").split("\0")
    except OSError:
        return False
    return (argv[0].endswith("acceptlab-diagnose") and "--port" in argv
            and argv[argv.index("--port") + 1] in ports)


def row(server, mode, found, expected=None, served=None, truth=None, workers=2, by_split=False, **extra):
    """A hand-written diagnosis row; found and expected: FIELDS' values."""
    expected = expected or found
    served = served if served is not None else {"101": 20, "102": 12}
    truth = truth if truth is not None else dict(served)
    ids = sorted(truth.values(), reverse=True)
    r = {"server": server, "ours": not server.startswith("nginx"), "software": "acceptlab-server",
         "setting": "--variant %s" % server, "configuration": ["--variant", server], "workers": workers,
         "connections": 32, "mode": mode, "load": "burst" if mode == "active" else None, "duration_s": 0.1,
         "traced": True, "partial": False, "split": "/".join(map(str, sorted(served.values(), reverse=True))),
         "split_of": "served", "within_2to1": True, "fair_chance": None, "per_worker": [],
         "served": served, "truth": truth, "truth_split": "/".join(map(str, ids)),
         "truth_source": "/pid answers", "truth_ids": "pid", "compared_by": "split" if by_split else "pid",
         "expected": dict(zip(diagnosis.FIELDS, expected)), "diagnose_exit": 0}
    r.update(zip(diagnosis.FIELDS, found))
    if mode == "passive":
        r.update(watch_s=0.5, probe_s=0.05)
    if by_split:
        r["served_matches_truth"] = sorted(served.values()) == sorted(truth.values())
    else:
        r["served_matches_truth"] = served == truth
    r["mismatched"] = [k for k, f, e in zip(diagnosis.FIELDS, found, expected) if f != e]
    r["mechanism_matches"] = not r["mismatched"]
    r.update(extra)
    return r


BARE = ("shared", 1, "epoll", None, False, "bare")
REORDER = ("shared", 1, "epoll-exclusive", None, False, "exclusive-reorder")


def render(tmp_path, rows):
    run = tmp_path / "results" / "20261129T081500Z"
    run.mkdir(parents=True)
    shutil.copy(FIXTURE_META, run / "meta.json")
    (run / "diagnosis.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "r.md"
    res = subprocess.run([*REPORT, "--results-dir", str(tmp_path / "results"), "--out", str(out), "--run", run.name],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    return res, (out.read_text() if out.exists() else "")


def test_report_names_every_mismatch(tmp_path):
    """Hand-written rows: a match, a served count that differs from the
    truth, a mechanism named wrong, a split compared as a split, an
    unavailable peer and a skipped server. The table's match column says
    yes or what failed; the count line counts them; each mismatch is named
    with what was found and what was expected."""
    rows = [row("bare", "active", BARE),
            row("bare", "passive", BARE, served={"101": 21, "102": 11}, truth={"101": 20, "102": 12}),
            row("nginx-default", "active", ("shared", 1, "epoll-exclusive", None, False, "exclusive"), REORDER,
                setting="accept_mutex off (the default)", truth_source="nginx access log $pid"),
            row("haproxy-mq-off", "active", ("shared", 1, "epoll", None, False, "lt"), served={"7": 12, "8": 20},
                truth={"0": 20, "1": 12}, by_split=True, truth_source="HAProxy thread", truth_ids="thread number"),
            {"kind": "unavailable", "server": "node-rr", "ours": False, "software": None,
             "reason": "node is not installed"},
            {"server": "reuseport-bpf", "ours": True, "workers": 4, "error": "skipped: needs root (CAP_BPF)"}]
    res, text = render(tmp_path, rows)
    assert res.returncode == 0, res.stderr
    assert "| bare | 2 | --variant bare | active | shared, epoll | bare | bare | 20/12 | 20/12 | /pid answers | yes |" \
        in text
    assert "| bare | 2 | --variant bare | passive | shared, epoll | bare | bare | 21/11 | 20/12 | /pid answers | " \
           "no: served |" in text
    assert ("| nginx-default | 2 | accept_mutex off (the default) | active | shared, epoll-exclusive | exclusive | "
            "exclusive-reorder | 20/12 | 20/12 | nginx access log $pid | no: mechanism |") in text
    assert "| haproxy-mq-off | 2 | --variant haproxy-mq-off | active | shared, epoll | lt | lt | 20/12 | 20/12 | " \
           "HAProxy thread | yes |" in text
    flat = " ".join(text.split())
    assert ("2 of 4 diagnoses match the server's own record: the mechanism as configured in 3 of 4, every worker's "
            "served count equal to the truth in 3 of 4. Where they differ:") in flat
    assert ("- bare, 2 workers, passive: served 21/11 against /pid answers 20/12 (compared by pid: served 101 21, "
            "102 11; truth 101 20, 102 12).") in text
    assert ('- nginx-default, 2 workers, active: closest_variant "exclusive" where "exclusive-reorder" was '
            'expected.') in text
    assert "- unavailable: node is not installed: node-rr" in text
    assert "- skipped: needs root (CAP_BPF): reuseport-bpf, 4 workers" in text


def test_report_refuses_a_row_whose_flag_disagrees(tmp_path):
    """A row that says served_matches_truth while its counts differ is one
    line naming the file, the line and the key, exit 1."""
    bad = row("bare", "active", BARE, served={"101": 21, "102": 11}, truth={"101": 20, "102": 12})
    bad["served_matches_truth"] = True
    res, _ = render(tmp_path, [row("bare", "passive", BARE), bad])
    assert res.returncode == 1
    assert res.stderr.count("\n") == 1 and "diagnosis.jsonl:2:" in res.stderr
    assert '"served_matches_truth" disagrees' in res.stderr, res.stderr


def test_expectations_are_test_diagnoses():
    """The study's expected mechanisms are the ones tests/test_diagnose.py
    holds the diagnosis to (our variants at 2 and 4 workers, the study's at
    DIAGNOSIS_WORKERS; the peers' table
    is the study's own, which test_diagnose.py imports), and every
    arm with the study's word has one; the study is in the campaign's
    default list of studies, so `make measure` runs it, leaving the peers to
    the census (which runs there too); asked alone, it runs them."""
    for spec, workers in test_diagnose.CASES:
        variant = spec.split()[0]  # its process-mode arm has its name; handoff's runs in threads mode
        got = diagnosis.expected_ours(variant, workers)
        assert tuple(got[k] for k in diagnosis.FIELDS) == test_diagnose.expected(spec, workers), (spec, workers)
    for name, want in diagnosis.PEERS_EXPECTED.items():
        got = diagnosis.expected_peer(name, 2)
        assert tuple(got[k] for k in diagnosis.FIELDS if k != "listeners") == want, name
    assert set(diagnosis.PEERS_EXPECTED) == set(diagnosis.PEER_SERVERS)
    for arm in arms.in_study("diagnosis"):
        assert arms.get(arm).variant in diagnosis.OURS_EXPECTED, arm
    assert "diagnosis" in campaign.DEFAULT_STUDIES and "census" in campaign.DEFAULT_STUDIES
    ours = ["%s %dw" % (a, n) for n in diagnosis.DIAGNOSIS_WORKERS for a in arms.in_study("diagnosis")]
    for studies, peers in ((None, []), ("diagnosis", list(diagnosis.PEER_SERVERS))):
        plan = subprocess.run([*CAMPAIGN, "--platform", "linux", "--plan",
                               *(["--studies", studies] if studies else [])], cwd=ROOT, capture_output=True,
                              text=True, timeout=60)
        assert plan.returncode == 0, plan.stderr
        steps = [l.split(None, 1)[1].split("   (")[0].strip() for l in plan.stdout.splitlines()
                 if l.startswith("diagnosis ")]
        assert steps == ours + peers, (studies, steps)
