"""Runs the C unit tests (the server's request parser, the probe's response
parsers, the hand-off queues and policy, the --shared-epoll listener's
EMFILE interleaving, and the exact chances of a fair split in
common/fair_split.c, and the diagnosis's advice file parser in ebpf/advice.c,
under ASan/UBSan; the hand-off tests again under TSan)
and a short fuzzing pass for servers/http.c; and checks fair_split's
chances against models/spread.py's exact big-integer counts.

The binaries are built by the Makefile (build/test_http, build/test_response,
build/test_conn_queue, build/test_conn_queue_tsan, build/test_shared_epoll,
build/test_fair_split, build/test_advice, build/fuzz_http); these tests only
run them.
"""
import math
import os
import platform
import re
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
FUZZ_HTTP = BUILD / "fuzz_http"
CORPUS = ROOT / "tests" / "fuzz" / "corpus_http"

FUZZ_SECONDS = 5
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed in (\d+) cases$")


def defined_cases(source):
    """The cases a C test program defines: its `static void test_*(void)`."""
    return re.findall(r"^static void (test_\w+)\(void\)", (ROOT / "tests" / "c" / source).read_text(), re.M)


def check_summary_line(last, source, out):
    """The summary line says every case the source defines ran, each ran at
    least one check (check.h's RUN fails one that ran none), at least one
    check passed, and none failed: "0 passed, 0 failed" is a failure, and
    so is a case main() forgot to run."""
    m = SUMMARY.match(last)
    assert m, f"unexpected summary line {last!r}:\n{out}"
    passed, failed, cases = map(int, m.groups())
    want = len(defined_cases(source))
    assert failed == 0, f"{failed} checks failed:\n{out}"
    assert passed > 0, f"no check ran:\n{out}"
    assert want > 0 and cases == want, f"{cases} cases ran of the {want} that {source} defines:\n{out}"


@pytest.mark.parametrize("name", ["test_http", "test_response", "test_conn_queue", "test_shared_epoll",
                                  "test_fair_split", "test_advice"])
def test_c_unit_tests_pass(name):
    """build/<name> exits 0 and its last line, "N passed, 0 failed in C
    cases", says some checks passed, none failed, and every case its
    source defines ran at least one check (check_summary_line).

    Each parser program checks a parser against the contract in its header
    with every input placed against a guard page, so an over-read shows up as
    a crash (non-zero exit) and a contract violation as a counted failure.
    test_conn_queue checks the connection queues and the hand-off policy;
    test_advice the diagnosis's advice file parser (ebpf/advice.c): the rows
    picked, every malformed file refused naming its line, where the file is
    looked for;
    test_fair_split the exact chances of a fair split against brute-force
    enumeration, an independent recurrence and, at the top sizes, its two
    ways of computing them against each other; test_shared_epoll
    replays, in one thread against servers/accept.c and servers/shared_epoll.c, the --shared-epoll
    interleaving of two threads' EMFILE rests that once left the listener's
    edge-triggered registration disarmed with connections waiting (it checks
    that epoll reports the listener again once the second rest ends). Both
    the exit status and the summary line are checked, so a crash that happened
    to exit 0 or a summary that disagreed with the status would still fail.
    """
    binary = BUILD / name
    if not binary.exists():
        pytest.fail(f"{binary} is missing: run make build/{name}")
    proc = subprocess.run([str(binary)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    out = proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    last = lines[-1] if lines else ""
    assert proc.returncode == 0, f"{name} exited {proc.returncode}:\n{out}"
    check_summary_line(last, name + ".c", out)


# (n, k, m): P(max >= m), P(all <= m - 1) and P(outside 2:1) against
# models/spread.py's exact counts (count_within, and analytic() where it is
# exact, not Monte Carlo); each case is one that spread.py counts in well
# under a second.
FAIR_SPLIT_CASES = [(32, 2, 17), (32, 2, 20), (32, 4, 12), (64, 4, 20), (100, 3, 45), (128, 8, 24),
                    (200, 16, 22), (64, 64, 3), (50, 256, 3), (256, 256, 4), (300, 5, 75), (0, 3, 1), (7, 1, 7)]
# k = 2 at the top size, where the exact count is a binomial tail: P(max >= m) = 2 P(X_1 >= m), m > n/2.
FAIR_SPLIT_K2 = [(100000, 2, 50001), (100000, 2, 50200), (100000, 2, 50800), (100000, 2, 51500)]


def fair_split_table(cases):
    """build/test_fair_split --table on cases: {(n, k, m): (max_at_least, outside, all_at_most)}."""
    binary = BUILD / "test_fair_split"
    if not binary.exists():
        pytest.fail(f"{binary} is missing: run make build/test_fair_split")
    proc = subprocess.run([str(binary), "--table"], input="".join("%d %d %d\n" % c for c in cases),
                          capture_output=True, text=True, timeout=120, check=True)
    out = {}
    for line in proc.stdout.splitlines():
        n, k, m, *values = line.split()
        out[int(n), int(k), int(m)] = tuple(float(v) for v in values)
    assert set(out) == set(cases), proc.stdout
    return out


def test_fair_split_matches_models_spread():
    """common/fair_split.c's exact chances equal models/spread.py's exact
    big-integer values: P(all <= m - 1) = count_within(k, n, 0, m - 1) / k^n
    and P(max >= m) its complement, to 1e-10 relative (plus 1e-300 for what
    underflows); P(outside 2:1) = analytic(k, n)'s, where that is exact, to
    1e-13 absolute (it is computed as 1 minus a sum); and, at n = 100000,
    P(max >= m) over 2 workers equals twice the exact binomial tail."""
    from models.spread import analytic, count_within
    got = fair_split_table(FAIR_SPLIT_CASES + FAIR_SPLIT_K2)
    compared = 0
    for n, k, m in FAIR_SPLIT_CASES:
        at_most = Fraction(count_within(k, n, 0, m - 1), k ** n) if n else Fraction(1)
        max_at_least, outside, all_at_most = got[n, k, m]
        assert math.isclose(all_at_most, float(at_most), rel_tol=1e-10, abs_tol=1e-300), (n, k, m, all_at_most)
        assert math.isclose(max_at_least, float(1 - at_most), rel_tol=1e-10, abs_tol=1e-300), (n, k, m)
        want = analytic(k, n)
        if want["method"] == "exact":
            assert math.isclose(outside, want["outside"], rel_tol=1e-10, abs_tol=1e-13), (n, k, outside, want)
            compared += 1
    assert compared >= 10
    for n, k, m in FAIR_SPLIT_K2:
        term, tail = math.comb(n, m), 0
        for j in range(m, n + 1):  # the exact tail, term by term
            tail += term
            term = term * (n - j) // (j + 1)
        want = float(Fraction(2 * tail, 2 ** n))
        assert math.isclose(got[n, k, m][0], want, rel_tol=1e-10), (n, k, m, got[n, k, m][0], want)


def test_summary_line_check_can_fail():
    """The summary check refuses what once passed: a run with no checks
    ("0 passed, 0 failed"), a run that skipped cases, the old line without
    a case count, and a failure."""
    want = len(defined_cases("test_http.c"))
    for bad in ("0 passed, 0 failed in 0 cases", "0 passed, 0 failed",
                f"5 passed, 0 failed in {want - 1} cases", f"5 passed, 1 failed in {want} cases",
                f"0 passed, 0 failed in {want} cases"):
        with pytest.raises(AssertionError):
            check_summary_line(bad, "test_http.c", "")
    check_summary_line(f"5 passed, 0 failed in {want} cases", "test_http.c", "")


# What TSan prints when the kernel placed a mapping where its shadow memory
# must go (seen with vm.mmap_rnd_bits above 28): an environment problem, not
# a race, and running without address randomization avoids it.
TSAN_MAPPING_FAILURE = "unexpected memory mapping"


def test_conn_queue_under_tsan():
    """build/test_conn_queue_tsan exits 0, reports no race, and its summary
    line says every case of test_conn_queue.c ran, none failed
    (check_summary_line).

    The same program as test_conn_queue, built with -fsanitize=thread: its
    threaded cases (8 producers and a consumer on one queue) make every
    access to the queue's fields race if the mutex does not cover it.
    TSAN_OPTIONS=halt_on_error=1 makes the first report end the program with
    a non-zero status, so a race fails here loudly rather than only printing
    a warning. If TSan cannot start because of the memory layout ASLR gave
    it, it is run again under `setarch -R` (randomization off for this
    process only); a race is never retried.
    """
    binary = BUILD / "test_conn_queue_tsan"
    if not binary.exists():
        pytest.fail(f"{binary} is missing: run make build/test_conn_queue_tsan")
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1")
    cmd = [str(binary)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0 and TSAN_MAPPING_FAILURE in proc.stderr and shutil.which("setarch"):
        cmd = ["setarch", platform.machine(), "-R", str(binary)]
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    last = lines[-1] if lines else ""
    assert "ThreadSanitizer" not in proc.stderr, f"{' '.join(cmd)} reported:\n{out}"
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}:\n{out}"
    check_summary_line(last, "test_conn_queue.c", out)


def test_http_fuzzer_runs_clean(tmp_path):
    """build/fuzz_http runs for FUZZ_SECONDS (5) on the seed corpus (`make fuzz` runs longer) and exits 0.

    libFuzzer exits non-zero when a sanitizer fires or the target abort()s on
    a broken invariant, so exit 0 means no crash, over-read, UB or contract
    violation was found in that time. The corpus is copied into a temporary
    directory because libFuzzer adds the inputs it finds to the corpus
    directory it is given, and the checked-in seeds must stay as they are.
    Skipped when the fuzzer was not built (it needs clang with libFuzzer).
    """
    if not FUZZ_HTTP.exists():
        pytest.skip(f"{FUZZ_HTTP} not built (needs clang -fsanitize=fuzzer)")
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS, corpus)
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    proc = subprocess.run(
        [str(FUZZ_HTTP), f"-max_total_time={FUZZ_SECONDS}", "-max_len=12000",
         f"-artifact_prefix={artifacts}{os.sep}", str(corpus)],
        cwd=tmp_path, capture_output=True, text=True, timeout=FUZZ_SECONDS + 120)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-40:])
    crashes = sorted(p.name for p in artifacts.iterdir())
    assert proc.returncode == 0, (
        f"fuzz_http exited {proc.returncode}; artifacts {crashes}:\n{tail}")


def test_http_fuzz_regressions_replay_clean():
    """The regression corpus (tests/fuzz/regressions/: odd heads the parser
    must survive: duplicate and overflowing Content-Length, obs-fold, a NUL
    in the path, a lone CR, Transfer-Encoding beside Content-Length, ...) is
    replayed input by input through the fuzz target: exit 0 means no
    sanitizer report and no broken parser contract on any of them."""
    if not FUZZ_HTTP.exists():
        pytest.skip(f"{FUZZ_HTTP} not built (needs clang -fsanitize=fuzzer)")
    inputs = sorted((ROOT / "tests" / "fuzz" / "regressions").iterdir())
    assert len(inputs) >= 8
    proc = subprocess.run([str(FUZZ_HTTP), *map(str, inputs)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr.count("Executed ") == len(inputs), proc.stderr[-2000:]


def test_make_fuzz_is_bounded(tmp_path):
    """`make fuzz FUZZ_SECONDS=2` fuzzes for about that long and exits 0
    (libFuzzer's own limit ends it; the test's timeout is only the guard)."""
    if not FUZZ_HTTP.exists():
        pytest.skip(f"{FUZZ_HTTP} not built (needs clang -fsanitize=fuzzer)")
    proc = subprocess.run(["make", "-s", "-C", str(ROOT), "fuzz", "FUZZ_SECONDS=2"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Done" in proc.stderr, proc.stderr[-2000:]
