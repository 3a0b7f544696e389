"""Runs the C unit tests (the server's request parser, the probe's response
parser, the hand-off queues and policy, and the --shared-epoll listener's
EMFILE interleaving, under ASan/UBSan; the hand-off tests again under TSan)
and a short fuzzing pass for servers/http.c.

The binaries are built by the Makefile (build/test_http, build/test_response,
build/test_conn_queue, build/test_conn_queue_tsan, build/test_shared_epoll,
build/fuzz_http); these tests only run them.
"""
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
FUZZ_HTTP = BUILD / "fuzz_http"
CORPUS = ROOT / "tests" / "fuzz" / "corpus_http"

FUZZ_SECONDS = 10
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


@pytest.mark.parametrize("name", ["test_http", "test_response", "test_conn_queue", "test_shared_epoll"])
def test_c_unit_tests_pass(name):
    """build/<name> exits 0 and its last line, "N passed, 0 failed in C
    cases", says some checks passed, none failed, and every case its
    source defines ran at least one check (check_summary_line).

    Each parser program checks a parser against the contract in its header
    with every input placed against a guard page, so an over-read shows up as
    a crash (non-zero exit) and a contract violation as a counted failure.
    test_conn_queue checks the connection queues and the hand-off policy; test_shared_epoll
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
    """build/fuzz_http runs for 10 seconds on the seed corpus and exits 0.

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
