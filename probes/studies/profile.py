"""profile: where a server's CPU goes on keep-alive GET / -> profile.jsonl
(one line per arm). Each arm (PROFILE_ARMS: our bare server and the cost
anchor, nginx, as the cost study starts it) serves wrk at PROFILE_WORKERS
workers twice on one server:

  samples   `perf record -e cpu-clock -F PROFILE_HZ -g` on its workers for
            the whole wrk run, then `perf report --no-children --sort
            dso,sym`: the top symbols by self share of the samples, and the
            server's CPU time per request over that run (CpuMeter)
  syscalls  `perf stat` of raw_syscalls:sys_enter (every syscall) and of the
            syscalls:sys_enter_* tracepoints of SYSCALLS (those a server
            makes per request or per connection) on its workers for a
            second wrk run: each one's count over the requests wrk
            completed, the rest as "other" (all 360-odd tracepoints would
            take perf seconds to open and close)

The two runs are apart so that the tracepoints' own cost is not in the
samples. perf missing, or no access to its events (not root and
kernel.perf_event_paranoid above 1: user-space samples only, no syscall
counts), is said in the row: an "error" that starts "skipped:" (the whole
arm), or "syscalls_skipped" with the reason (that half). --bench-seconds,
when shorter, shortens both runs (a test's tiny run)."""

import contextlib
import os
import shutil
import signal
import subprocess
import time

from acceptlab import arms
from probes.harness.cpu import CpuMeter, cpu_fields, process_tree
from probes.harness.lifecycle import StepFailed, forget, is_root, register
from probes.harness.servers import ServerRun, peer_running
from probes.harness.wrk import finish_wrk, need_wrk, start_wrk
from probes.studies.common import read_sysctl
from probes.studies.cost import ANCHOR_ARMS, COST_CONNECTIONS, COST_PATH, headers_of, pinned, placement_meta

NAME = "profile"
PROFILE_ARMS = ["bare", "nginx"]
PROFILE_WORKERS = 2
PROFILE_SECONDS = 2          # wrk -d of the sampled run
STAT_SECONDS = 1             # wrk -d of the counted run
SYSCALLS = ["read", "recvfrom", "recvmsg", "readv", "write", "writev", "sendto", "sendmsg", "sendfile64",
            "epoll_wait", "epoll_pwait", "epoll_pwait2", "epoll_ctl", "accept", "accept4", "close", "shutdown",
            "setsockopt", "getsockopt", "fcntl", "ioctl", "clock_gettime", "gettimeofday", "futex", "brk",
            "mmap", "munmap"]
PROFILE_HZ = 999
PROFILE_MODE = "keepalive"
TOP_SYMBOLS = 15             # symbols kept per arm (by self share)
ATTACH_S = 0.3               # perf's time to attach before wrk starts
PERF_TIMEOUT_S = 60


def arms_of(plan):
    return list(PROFILE_ARMS)


def seconds(plan, default):
    """A run's wrk -d: the default, or --bench-seconds when that is shorter
    (a test's tiny run)."""
    given = plan.bench_seconds
    return min(default, given) if given else default


def perf_path():
    return shutil.which("perf")


def meta(plan):
    return {"profile": {"arms": PROFILE_ARMS, "workers": PROFILE_WORKERS, "path": COST_PATH,
                        "mode": PROFILE_MODE, "connections": COST_CONNECTIONS[PROFILE_MODE],
                        "duration_s": seconds(plan, PROFILE_SECONDS),
                        "stat_duration_s": seconds(plan, STAT_SECONDS), "syscalls": SYSCALLS,
                        "sample_hz": PROFILE_HZ, "top_symbols": TOP_SYMBOLS, "placement": placement_meta(),
                        "perf_event_paranoid": read_sysctl("kernel.perf_event_paranoid")}}


def access():
    """(kernel samples, syscall tracepoints): what perf may see here, and
    why not when it may not."""
    if is_root():
        return True, None
    paranoid = read_sysctl("kernel.perf_event_paranoid")
    try:
        level = int(paranoid)
    except (TypeError, ValueError):
        level = 2
    if level <= -1:
        return True, None
    why = "not root and kernel.perf_event_paranoid is %s: no syscall tracepoints" % paranoid
    return level <= 1, why


def stop_perf(proc):
    """perf attached with -p runs until SIGINT; it writes its output then."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=PERF_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise StepFailed("perf did not finish within %d s of SIGINT" % PERF_TIMEOUT_S)


def perf_around_wrk(perf_cmd, root, port, prefix, tag, seconds, mode=PROFILE_MODE):
    """perf_cmd (+ -p WORKERS) attached while wrk runs seconds in mode (the
    cost study's connections and headers for it), the server and wrk on
    separate CPUs as the cost study runs them; returns (wrk's dict, the
    server tree's CPU ns, perf's stderr text)."""
    wrk_cpus = pinned(root)
    pids = process_tree(root)[1:] or [root]  # the workers (not the idle supervisor or master)
    cmd = perf_cmd + ["-p", ",".join(map(str, pids))]
    with open(prefix + ".%s.cmd" % tag, "w") as f:
        f.write(" ".join(cmd) + "\n")
    err_path = prefix + ".%s.stderr" % tag
    with open(err_path, "w") as err:
        perf = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    register(perf, stop_perf)
    try:
        time.sleep(ATTACH_S)
        if perf.poll() is not None:
            raise StepFailed("perf exited %s at once: %s" % (perf.returncode, tail_text(err_path)))
        with CpuMeter(root) as cpu:
            out = finish_wrk(start_wrk(prefix + "." + tag, port, COST_PATH, COST_CONNECTIONS[mode], seconds,
                                       headers_of(mode), cpus=wrk_cpus))
        stop_perf(perf)
    finally:
        if perf.poll() is None:
            perf.kill()
            perf.wait()
        forget(perf)
    with open(err_path) as f:
        text = f.read()
    return out, cpu.ns, text


def tail_text(path, n=300):
    try:
        with open(path) as f:
            return " ".join(f.read()[-n:].split())
    except OSError:
        return "?"


def parse_report(text):
    """perf report --stdio --no-children --sort dso,sym -g none lines
    ("  30.22%  [kernel.kallsyms]  [k] name") -> [{symbol, dso, space, self_pct}]."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 4 or not parts[0].endswith("%") or parts[2] not in ("[k]", "[.]"):
            continue
        try:
            pct = float(parts[0][:-1])
        except ValueError:
            continue
        out.append({"symbol": " ".join(parts[3:]), "dso": parts[1],
                    "space": "kernel" if parts[2] == "[k]" else "user", "self_pct": pct})
    return out


def parse_stat(text):
    """perf stat -x, lines ("1234,,syscalls:sys_enter_read,...") -> (every
    syscall's count (raw_syscalls:sys_enter) or None, {syscall: count} of
    those counted by name, nonzero only)."""
    total, out = None, {}
    for line in text.splitlines():
        f = line.split(",")
        if len(f) < 3 or not f[0].isdigit():
            continue
        if f[2] == "raw_syscalls:sys_enter":
            total = int(f[0])
        elif f[2].startswith("syscalls:sys_enter_") and int(f[0]):
            out[f[2][len("syscalls:sys_enter_"):]] = int(f[0])
    return total, out


def samples_of(by_dso):
    """The sample count: perf report -n --sort dso lines ("  77.64%   1234
    [kernel.kallsyms]") summed (the header rounds it: "1K")."""
    total = 0
    for line in by_dso.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0].endswith("%") and parts[1].isdigit():
            total += int(parts[1])
    return total or None


def report_symbols(perf, data, prefix, limit=None):
    """perf's report of data: its symbols by self share (parse_report's;
    limit, a percent, the least kept) and its sample count (from the report
    by dso), both kept at prefix.perf.txt. StepFailed when it found no
    samples."""
    base = [perf, "report", "-i", data, "--stdio", "--no-children", "-g", "none"]
    rep = subprocess.run(base + ["--sort", "dso,sym"] + (["--percent-limit", str(limit)] if limit else []),
                         capture_output=True, text=True, timeout=PERF_TIMEOUT_S)
    by_dso = subprocess.run(base + ["-n", "--sort", "dso"], capture_output=True, text=True, timeout=PERF_TIMEOUT_S)
    with open(prefix + ".perf.txt", "w") as f:
        f.write(rep.stdout + by_dso.stdout)
    symbols = parse_report(rep.stdout)
    if rep.returncode != 0 or not symbols:
        raise StepFailed("perf report found no samples (exit %s): %s" % (rep.returncode, tail_text(prefix + ".perf.txt")))
    return symbols, samples_of(by_dso.stdout)


def profile_arm(plan, root, port, prefix, perf):
    kernel, why_not = access()
    row = {"perf": perf_version(perf)}
    data = prefix + ".perf.data"
    event = "cpu-clock" if kernel else "cpu-clock:u"
    out, ns, _ = perf_around_wrk([perf, "record", "-e", event, "-F", str(PROFILE_HZ), "-g", "-o", data],
                                 root, port, prefix, "record",
                                 seconds(plan, PROFILE_SECONDS))
    row.update({"requests": out["requests"], "requests_per_s": out["requests_per_s"],
                "kernel_samples": kernel})
    row.update(cpu_fields(ns, out["requests"]))
    callers = subprocess.run([perf, "report", "-i", data, "--stdio", "--no-children", "--sort", "sym",
                              "-g", "caller,0.5,callee", "--percent-limit", "2"],
                             capture_output=True, text=True, timeout=PERF_TIMEOUT_S)
    with open(prefix + ".perf-callers.txt", "w") as f:
        f.write(callers.stdout)
    try:
        symbols, row["samples"] = report_symbols(perf, data, prefix, limit=0.3)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(data)  # the reports keep what the row reads; the data file is megabytes
    row["user_pct"] = round(sum(s["self_pct"] for s in symbols if s["space"] == "user"), 2)
    row["symbols"] = symbols[:TOP_SYMBOLS]
    if why_not:
        row["syscalls_skipped"] = why_not
        return row
    events = ",".join(["raw_syscalls:sys_enter"] + ["syscalls:sys_enter_" + n for n in SYSCALLS])
    out2, _, text = perf_around_wrk([perf, "stat", "-x,", "-e", events], root, port, prefix, "stat",
                                   seconds(plan, STAT_SECONDS))
    total, counts = parse_stat(text)
    reqs = out2["requests"]
    if not total or not reqs:
        row["syscalls_skipped"] = "perf stat counted no syscalls: %s" % tail_text(prefix + ".stat.stderr")
        return row
    named = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))  # every one SYSCALLS names that ran
    other = total - sum(n for _, n in named)
    row["syscall_requests"] = reqs
    row["syscalls_per_request"] = round(total / reqs, 3)
    row["syscalls"] = [{"name": name, "count": n, "per_request": round(n / reqs, 3)}
                       for name, n in named + ([("other", other)] if other > 0 else [])]
    return row


_versions = {}


def perf_version(perf):
    if perf not in _versions:
        try:
            text = subprocess.run([perf, "--version"], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            text = ""
        _versions[perf] = text.strip() or "unknown"
    return _versions[perf]


def run_arm(plan, raw_dir, arm):
    perf = perf_path()
    if not perf:
        raise StepFailed("skipped: perf not found (Debian's linux-perf; ci/deps.sh installs it)")
    need_wrk()
    prefix = os.path.join(raw_dir, "profile-%s" % arm)
    base = {"arm": arm, "workers": PROFILE_WORKERS, "mode": PROFILE_MODE, "path": COST_PATH}
    if arm in ANCHOR_ARMS:
        with peer_running(ANCHOR_ARMS[arm], PROFILE_WORKERS, prefix) as peer:
            row = profile_arm(plan, peer.proc.pid, peer.port, prefix, perf)
            row["peer"] = ANCHOR_ARMS[arm]
            row["software"] = peer.version
    else:
        with ServerRun(arms.server_args(arm), PROFILE_WORKERS, prefix, arms.env(arm)) as (proc, ready, _):
            row = profile_arm(plan, proc.pid, ready["port"], prefix, perf)
    row = dict(base, **row)
    top = row["symbols"][0]
    text = "%.2f CPU us/req, top %s %.1f%%" % (row["cpu_us_per_request"] or 0, top["symbol"], top["self_pct"])
    if "syscalls_per_request" in row:
        text += ", %.2f syscalls/req" % row["syscalls_per_request"]
    return [row], text


def steps(plan, raw_dir):
    for arm in PROFILE_ARMS:
        def step(arm=arm):
            return run_arm(plan, raw_dir, arm)
        yield "%-17s %dw %s" % (arm, PROFILE_WORKERS, PROFILE_MODE), step, \
            {"arm": arm, "workers": PROFILE_WORKERS, "mode": PROFILE_MODE}
