"""Tests for report/figures.py (the SVG figures) and report/quicklook.py (the
gnuplot text plots `make measure` prints).

The figures are drawn from the report's fixture run
(tests/fixtures/report/results/linux/20261129T081500Z: balancing, cost,
payoff and burst rows with failed steps, starved rounds and no raw/ directory, so the
payoff CDFs take the p50/p99 fallback) plus tests/fixtures/figures/placement.jsonl,
a synthetic placement study (3 shapes x 3 placements x 3 variants x 5 runs, a
cell whose every run failed, a failed run in a measured cell and two stop_winner
rows the heat map must skip).

The golden SVGs in tests/fixtures/figures/expected/ were looked at (rendered)
and are pinned byte-for-byte; VERSIONS there records the matplotlib and
FreeType they were drawn with (glyph outlines and path output may differ in
another version, and then the golden comparison is skipped, not the
determinism tests). If a figure changes on purpose, regenerate them with

    /usr/bin/python3 -m tests.test_figures --regenerate

and look at the new figures before committing them.
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("test_figures.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m tests.test_figures --regenerate\n")
    sys.exit(2)

import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from acceptlab.paths import module_cmd
from report import figures
from tests.conftest import packages_env

REPO = Path(__file__).resolve().parent.parent
FIGURES = "report.figures"
QUICKLOOK = "report.quicklook"
REPORT_RUN = REPO / "tests" / "fixtures" / "report" / "results" / "linux" / "20261129T081500Z"
FIXTURE = REPO / "tests" / "fixtures" / "figures"
EXPECTED = FIXTURE / "expected"
NAMES = ["balancing_shares.svg", "burst_completion.svg", "cost_bars.svg", "payoff_latency.svg",
         "placement_heatmap.svg"]
SVG = "{http://www.w3.org/2000/svg}"
NO_GNUPLOT = "quicklook: gnuplot not found; skipping the terminal plots (apt-get install gnuplot-nox)"


def versions() -> str:
    import matplotlib
    import matplotlib.ft2font
    return f"matplotlib {matplotlib.__version__}\nfreetype {matplotlib.ft2font.__freetype_version__}\n"


def make_run(dest: Path) -> Path:
    """A writable run directory: the report's fixture run plus the placement fixture."""
    shutil.copytree(REPORT_RUN, dest)
    shutil.copy(FIXTURE / "placement.jsonl", dest / "placement.jsonl")
    return dest


def run_cli(module: str, *args, cwd=REPO, env=None):
    return subprocess.run(module_cmd(module, *args), cwd=cwd, env=packages_env(env),
                          capture_output=True, text=True, timeout=120)


def rows(path: Path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def ids(svg: Path) -> dict:
    """id -> element for every element of the SVG that has one (parsing also proves
    the file is well-formed XML)."""
    root = ET.parse(svg).getroot()
    assert root.tag == SVG + "svg"
    return {e.get("id"): e for e in root.iter() if e.get("id")}


def markers(element) -> int:
    """The markers a Line2D drew: one <use> per point."""
    return sum(1 for e in element.iter(SVG + "use"))


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """The fixture run drawn once in this process; (run dir, out dir, returned paths)."""
    base = tmp_path_factory.mktemp("figures")
    run = make_run(base / "run")
    out = base / "out"
    written = figures.make_figures(run, out)
    return run, out, written


def test_make_figures_returns_every_figure_sorted(drawn):
    """With every input present make_figures writes the five figures (each SVG with
    its PNG copy) and returns the SVG paths sorted, nothing else in the directory:
    the report embeds exactly what it returns."""
    run, out, written = drawn
    assert written == sorted(out / n for n in NAMES)
    assert sorted(p.name for p in out.iterdir()) == sorted(NAMES + [n[:-4] + ".png" for n in NAMES])


def test_figures_regenerate_byte_for_byte(drawn, tmp_path):
    """Drawing the same run again in another process, from another directory, with
    another hash seed, time zone and a hostile matplotlibrc (other font, font size,
    svg.fonttype, hash salt, colours, backend) gives the same bytes: the figures
    depend on the run's files only, as `make report` on the committed run needs."""
    run, out, _ = drawn
    config = tmp_path / "mplconfig"
    config.mkdir()
    (config / "matplotlibrc").write_text(
        "font.size: 20\nfont.family: serif\nsvg.fonttype: none\nsvg.hashsalt: other\n"
        "lines.linewidth: 5\naxes.prop_cycle: cycler('color', ['r', 'g'])\nsavefig.dpi: 300\n")
    env = dict(os.environ, MPLCONFIGDIR=str(config), MPLBACKEND="TkAgg", PYTHONHASHSEED="4242",
               TZ="Asia/Tokyo", SOURCE_DATE_EPOCH="1", HOME=str(tmp_path))
    again = tmp_path / "again"
    proc = run_cli(FIGURES, "--run-dir", run, "--out", again, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    for name in NAMES:
        assert (again / name).read_bytes() == (out / name).read_bytes(), f"{name} differs between two runs"


def test_figures_match_golden(drawn):
    """The fixture run draws exactly the reviewed SVGs in tests/fixtures/figures/expected/
    (skipped when this matplotlib/FreeType is not the one VERSIONS names: their path
    output is not byte-stable across versions). Regenerate: see the module docstring."""
    _, out, _ = drawn
    recorded = (EXPECTED / "VERSIONS").read_text()
    if recorded != versions():
        pytest.skip(f"goldens drawn with {recorded!r}, this is {versions()!r}")
    for name in NAMES:
        assert (out / name).read_bytes() == (EXPECTED / name).read_bytes(), (
            f"{name} differs from tests/fixtures/figures/expected/{name}; if intended, "
            "regenerate with /usr/bin/python3 -m tests.test_figures --regenerate and look at it")


def test_font_is_matplotlibs_own_dejavu_sans():
    """The glyph outlines come from the DejaVu Sans that ships with matplotlib, not a
    system copy (Debian's fonts-dejavu-core is another version with other outlines):
    matplotlib lists its own fonts first and takes the first on a tie. If this
    fails, figures drawn here are not the committed ones."""
    import matplotlib
    from matplotlib import font_manager
    found = Path(font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans"),
                                       fallback_to_default=False))
    assert found == Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"


def test_svgs_carry_no_generation_metadata(drawn):
    """No date, creator or generator version in the files, and glyphs as paths (no
    <text> elements, so no dependence on the viewer's fonts)."""
    _, out, _ = drawn
    for name in NAMES:
        text = (out / name).read_text()
        assert "dc:date" not in text and "Matplotlib v" not in text and "dc:creator" not in text
        root = ET.parse(out / name).getroot()
        assert not list(root.iter(SVG + "text")), f"{name} has <text>: svg.fonttype is not 'path'"


def test_balancing_has_every_variant_and_round(drawn):
    """Every (variant, shape) with measured rounds in balancing.jsonl has its marker
    group, with one marker per round that answered anything, and no group is there
    that the file does not have: dropping a variant, a shape or a round fails here.
    Failed steps (rows with "error") draw nothing."""
    run, out, _ = drawn
    expected = {}
    for r in rows(run / "balancing.jsonl"):
        if "error" not in r and sum(r["counts"].values()) > 0:
            key = f"share__{r['variant']}__{r['shape']}"
            expected[key] = expected.get(key, 0) + 1
    found = {k: markers(e) for k, e in ids(out / "balancing_shares.svg").items() if k.startswith("share__")}
    assert found == expected
    variants = {k.split("__")[1] for k in found}
    assert variants == {"bare", "bare-threads", "exclusive", "lt", "lt-yield", "handoff"}


def test_balancing_marks_a_variant_without_rounds(tmp_path):
    """A variant whose every step failed keeps its row, marked "no measured round"
    (an element with id empty__VARIANT), instead of vanishing from the figure."""
    run = make_run(tmp_path / "run")
    with (run / "balancing.jsonl").open("a") as f:
        f.write(json.dumps({"variant": "reuseport", "shape": "burst", "error": "server did not become ready"}) + "\n")
    figures.make_figures(run, tmp_path / "out")
    found = ids(tmp_path / "out" / "balancing_shares.svg")
    assert "empty__reuseport" in found
    assert not any(k.startswith("share__reuseport__") for k in found)


def test_cost_has_a_bar_per_arm_workers_and_mode(drawn):
    """One bar per (mode, arm, workers) that has a measured round in cost.jsonl (the
    failed close/bare/1-worker round leaves its other round's bar), none more."""
    run, out, _ = drawn
    expected = {f"cost__{r['mode']}__{r['arm']}__w{r['workers']}"
                for r in rows(run / "cost.jsonl") if "error" not in r}
    found = {k for k in ids(out / "cost_bars.svg") if k.startswith("cost__")}
    assert found == expected and len(found) == 8


def test_burst_has_a_bar_per_arm_workers_and_k(drawn):
    """The burst figure draws one bar per measured (workers, arm, K) of the
    fixture's burst rows, and none for the failed step (reuseport-bpf)."""
    run, out, _ = drawn
    want = {"burst__w%d__%s__k%d" % (r["workers"], r["arm"], r["connections"])
            for r in rows(run / "burst.jsonl") if "error" not in r}
    found = {k for k in ids(out / "burst_completion.svg") if k.startswith("burst__")}
    assert found == want and not any("reuseport-bpf" in k for k in found), found


def test_payoff_falls_back_to_p50_p99(drawn):
    """Without raw/ the CDF of each (connections, arm, workers) is drawn through the
    rows' p50 and p99: two points per curve, one curve per measured cell."""
    run, out, _ = drawn
    expected = {f"cdf__c{r['connections']}__{r['arm']}__w{r['workers']}"
                for r in rows(run / "payoff.jsonl") if "error" not in r}
    found = {k: markers(e) for k, e in ids(out / "payoff_latency.svg").items() if k.startswith("cdf__")}
    assert set(found) == expected and len(found) == 6
    assert set(found.values()) == {2}


def test_payoff_reads_wrk_latency_distribution(tmp_path):
    """With raw/payoff-ARM-wW-cC-rR.wrk.txt present the curve goes through wrk's
    50/75/90/99% lines (4 points) in us, ms and s, median over rounds; cells
    without raw files keep the 2-point fallback."""
    run = make_run(tmp_path / "run")
    raw = run / "raw"
    raw.mkdir()
    template = ("Running 6s test @ http://127.0.0.1:1/work?us=500\n  2 threads and 8 connections\n"
                "  Latency Distribution\n     50%  {}\n     75%  {}\n     90%  {}\n     99%  {}\n"
                "  11583 requests in 6.01s, 1.28MB read\nRequests/sec:   1930.50\n")
    (raw / "payoff-bare-w1-c8-r1.wrk.txt").write_text(template.format("900.00us", "1.50ms", "2.00ms", "1.20s"))
    (raw / "payoff-bare-w1-c8-r2.wrk.txt").write_text(template.format("1.10ms", "1.70ms", "4.00ms", "1.40s"))
    assert figures.read_wrk_distribution(raw / "payoff-bare-w1-c8-r1.wrk.txt") == (
        (0.5, 0.9), (0.75, 1.5), (0.9, 2.0), (0.99, 1200.0))
    data = figures.gather_payoff(figures.read_meta(run), run,
                                 figures.read_rows(run / "payoff.jsonl", figures.read_payoff))
    curve, from_raw, n = data.curves[(8, "bare", 1)]
    assert from_raw and n == 2
    assert curve == ((0.5, 1.0), (0.75, 1.6), (0.9, 3.0), (0.99, 1300.0))
    assert data.curves[(8, "bare", 2)][1] is False
    figures.make_figures(run, tmp_path / "out")
    found = ids(tmp_path / "out" / "payoff_latency.svg")
    assert markers(found["cdf__c8__bare__w1"]) == 4
    assert markers(found["cdf__c32__bare__w1"]) == 2


def test_placement_heatmap_cells(drawn):
    """One annotated cell per shape x placement x variant (stop_winner rows skipped,
    so its shape has no panel), including the cell whose runs all failed; the
    colour is the median busiest share and the annotation k/n sums
    both_answered_rounds over rounds, checked here against the fixture."""
    run, out, _ = drawn
    data = figures.gather_placement(figures.read_rows(run / "placement.jsonl", figures.read_placement))
    assert data.shapes == ["oneshot", "burst", "ramp"]
    assert [p for p, _ in data.placements] == ["unpinned", "pinned-probe-cpu1", "pinned-probe-cpu0"]
    assert data.variants == ["bare", "exclusive", "reuseport"]
    # unpinned/bare/oneshot: busiest 52,61,80,47,58 of 80 -> median 58/80; 8+4+0+8+6 of 50 rounds
    assert data.cells[("oneshot", "unpinned", "bare")] == (58 / 80, 26, 50, 5)
    assert ("ramp", "pinned-probe-cpu0", "exclusive") not in data.cells
    assert ("ramp", "pinned-probe-cpu0", "exclusive") in data.failed
    found = {k for k in ids(out / "placement_heatmap.svg") if k.startswith("cell__")}
    assert len(found) == 27 and "cell__ramp__pinned-probe-cpu0__exclusive" in found
    assert not any("stop_winner" in k for k in found)


def test_missing_inputs_skip_their_figures(tmp_path):
    """A run with only balancing.jsonl (no meta.json either) draws only the balancing
    figure, says why the others are skipped, and removes a stale figure left in the
    output directory by an older run, so report/figures/ shows exactly this run."""
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(REPORT_RUN / "balancing.jsonl", run / "balancing.jsonl")
    out = tmp_path / "out"
    out.mkdir()
    (out / "cost_bars.svg").write_text("stale")
    (out / "cost_bars.png").write_text("stale")
    (out / "notes.txt").write_text("not ours")
    said = []
    written = figures.make_figures(run, out, say=said.append)
    assert written == [out / "balancing_shares.svg"]
    assert sorted(p.name for p in out.iterdir()) == ["balancing_shares.png", "balancing_shares.svg", "notes.txt"]
    assert len(said) == 4 and all("not drawn" in line for line in said)


def test_corrupt_line_exits_1_naming_file_and_line(tmp_path):
    """A corrupt balancing.jsonl line makes the CLI exit 1 with one stderr line naming
    FILE:LINE, no traceback, and nothing written (inputs are read before drawing)."""
    run = make_run(tmp_path / "run")
    lines = (run / "balancing.jsonl").read_text().splitlines(keepends=True)
    lines[6] = '{"variant": "bare", "shape": "burst", "round": 1,\n'
    (run / "balancing.jsonl").write_text("".join(lines))
    proc = run_cli(FIGURES, "--run-dir", "run", "--out", "out", cwd=tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == ["figures: run/balancing.jsonl:7: invalid JSON: Expecting property name "
                                        "enclosed in double quotes"]
    assert not (tmp_path / "out").exists()


def test_row_with_wrong_field_names_it(tmp_path):
    """A well-formed row the figure cannot use (counts not per-worker integers) is
    also one FILE:LINE line saying which field is wrong, exit 1."""
    run = make_run(tmp_path / "run")
    with (run / "cost.jsonl").open("a") as f:
        f.write(json.dumps({"arm": "bare", "workers": 2, "mode": "close", "round": 3,
                            "requests_per_s": "fast"}) + "\n")
    proc = run_cli(FIGURES, "--run-dir", "run", "--out", "out", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == ['figures: run/cost.jsonl:17: "requests_per_s" must be a number >= 0, '
                                        'got "fast"']


def test_corrupt_wrk_percentile_names_raw_file_line(tmp_path):
    """A garbled percentile line in a raw wrk file is that file's line at fault."""
    run = make_run(tmp_path / "run")
    (run / "raw").mkdir()
    (run / "raw" / "payoff-lt-w2-c8-r1.wrk.txt").write_text(
        "Running\n  Latency Distribution\n     50%    2.17ms\n     75%    lots\n")
    proc = run_cli(FIGURES, "--run-dir", "run", "--out", "out", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == ["figures: run/raw/payoff-lt-w2-c8-r1.wrk.txt:4: cannot read a latency "
                                        "percentile from '75%    lots'"]


@pytest.mark.parametrize("args, message", [
    ([], "figures: the following arguments are required: --run-dir (see --help)"),
    (["--run-dir", "nowhere"], "figures: argument --run-dir: 'nowhere' is not a directory (see --help)"),
    (["--run-dir", ".", "--out", "file"], "figures: argument --out: 'file' exists and is not a directory (see --help)"),
])
def test_bad_arguments_exit_2(tmp_path, args, message):
    """Usage errors are exit 2 with one line naming the argument, not argparse's usage block."""
    (tmp_path / "file").write_text("")
    proc = run_cli(FIGURES, *args, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [message]


def test_help_exits_0():
    """--help documents the figures and the exit statuses."""
    proc = run_cli(FIGURES, "--help")
    assert proc.returncode == 0
    assert "balancing_shares.svg" in proc.stdout and "Exit status" in proc.stdout


def test_committed_figures_regenerate_byte_for_byte(tmp_path):
    """report/figures/*.svg and their PNG copies, once committed, are exactly what
    the run CANONICAL names draws (like report/linux.md): nobody edits a figure by
    hand, and a new CANONICAL run comes with its figures. Skipped until figures are
    committed."""
    committed = sorted((REPO / "report" / "figures").glob("*.svg"))
    pngs = sorted((REPO / "report" / "figures").glob("*.png"))
    if not committed:
        pytest.skip("no report/figures/*.svg committed yet")
    if (EXPECTED / "VERSIONS").read_text() != versions():
        pytest.skip(f"figures are pinned for {(EXPECTED / 'VERSIONS').read_text()!r}")
    results = REPO / "results" / "linux"
    run = results / (results / "CANONICAL").read_text().strip()
    written = figures.make_figures(run, tmp_path)
    assert [p.name for p in written] == [p.name for p in committed]
    assert [p.stem for p in pngs] == [p.stem for p in committed], "a figure without its PNG copy"
    for p in committed + pngs:
        assert (tmp_path / p.name).read_bytes() == p.read_bytes(), f"report/figures/{p.name} differs"


# ---------------------------------------------------------------- quicklook


def test_quicklook_plots_with_gnuplot():
    """With gnuplot installed (gnuplot-nox is a `make deps` package) quicklook prints
    both text plots, each followed by its numbered list of variants or arms in
    meta.json's order, and exits 0."""
    if shutil.which("gnuplot") is None:
        pytest.skip("gnuplot is not installed (apt-get install gnuplot-nox)")
    proc = run_cli(QUICKLOOK, "--run-dir", REPORT_RUN)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "balancing: the busiest worker's median share per variant" in out
    assert "cost: median requests/s per arm at 2 workers" in out
    for i, v in enumerate(["bare", "bare-threads", "exclusive", "lt", "lt-yield", "handoff"], start=1):
        assert re.search(rf"(^|\s){i} {re.escape(v)}(\s|$)", out, re.M), f"{i} {v} is not listed"
    assert " 1 bare    2 lt" in out
    assert "+---" in out  # gnuplot's frame: the dumb terminal drew
    assert max(len(line) for line in out.splitlines()) <= 100


def test_quicklook_without_gnuplot_says_one_line(tmp_path):
    """Without gnuplot on PATH it prints exactly the one line saying how to get it,
    and exits 0: a missing plotter must not fail `make measure`."""
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = run_cli(QUICKLOOK, "--run-dir", REPORT_RUN, env=dict(os.environ, PATH=str(empty)))
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == [NO_GNUPLOT]
    assert proc.stderr == ""


def test_quicklook_skips_missing_and_corrupt_inputs(tmp_path):
    """A missing cost.jsonl and a corrupt balancing.jsonl each skip their plot with a
    line saying why (FILE:LINE for the corrupt one); exit 0 all the same."""
    if shutil.which("gnuplot") is None:
        pytest.skip("gnuplot is not installed (apt-get install gnuplot-nox)")
    run = tmp_path / "run"
    run.mkdir()
    (run / "balancing.jsonl").write_text('{"variant": "bare"}\n')
    proc = run_cli(QUICKLOOK, "--run-dir", "run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        'quicklook: run/balancing.jsonl:1: missing required key "shape"; skipping the balancing plot',
        "quicklook: no cost.jsonl in run; skipping the cost plot",
    ]


def test_quicklook_bad_arguments_exit_2():
    """A run directory that is not there is a usage error: exit 2, one line."""
    proc = run_cli(QUICKLOOK, "--run-dir", "/nonexistent/run")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "quicklook: argument --run-dir: '/nonexistent/run' is not a directory (see --help)"]


def regenerate() -> None:
    """Redraws the goldens from the fixture run and records the versions."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        run = make_run(Path(tmp) / "run")
        EXPECTED.mkdir(parents=True, exist_ok=True)
        for p in figures.make_figures(run, EXPECTED):
            print(f"wrote {p.relative_to(REPO)}")
    (EXPECTED / "VERSIONS").write_text(versions())
    print(f"wrote {(EXPECTED / 'VERSIONS').relative_to(REPO)}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit("usage: /usr/bin/python3 -m tests.test_figures --regenerate")
    regenerate()
