#!/usr/bin/python3
"""How the data in this directory was taken: one bare server (2 workers),
bin/acceptlab-trace attached to its process group, and bin/acceptlab-probe
running R rounds of one shape against it; writes PREFIX.{ready,trace,probe,
workers} and prints the measured rounds outside 2:1. Needs root (the tracer).

    traced_run.py burst 60 /tmp/b60     # then the same with: ramp 30 /tmp/r30

trace.jsonl and balancing.jsonl here are those two runs' worker lines and
probe rounds, in the campaign's trace.jsonl / balancing.jsonl row formats."""
import json, os, signal, subprocess, sys, time
shape, rounds, prefix = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
variant = sys.argv[4] if len(sys.argv) > 4 else "bare"
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
procs = []
def start(argv, **kw):
    p = subprocess.Popen(argv, start_new_session=True, **kw); procs.append(p); return p
try:
    srv = start(["bin/acceptlab-server", "--variant", variant, "--workers", "2", "--port", "0"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    ready = srv.stdout.readline().decode()
    open(prefix + ".ready", "w").write(ready)
    port = json.loads(ready)["port"]
    tr = start(["bin/acceptlab-trace", "--pgid", str(srv.pid), "--json"], stdout=open(prefix + ".trace", "w"),
               stderr=subprocess.DEVNULL)
    for _ in range(100):
        if "attached" in open(prefix + ".trace").read(): break
        time.sleep(0.1)
    subprocess.run(["bin/acceptlab-probe", "--target", f"127.0.0.1:{port}", "--shape", shape, "--connections", "32",
                    "--rounds", rounds, "--gap-ms", "10", "--workers-from", prefix + ".ready", "--json"],
                   stdout=open(prefix + ".probe", "w"), stderr=subprocess.DEVNULL, timeout=300)
    tr.send_signal(signal.SIGTERM); tr.wait(timeout=10)
finally:
    for p in procs:
        try: os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError: pass
        p.wait()
n = o = 0
for l in open(prefix + ".probe"):
    r = json.loads(l)
    if r.get("round") and "split" in r:
        c = [int(x) for x in r["split"].split("/")]; n += 1; o += (min(c) == 0 or max(c) > 2 * min(c))
print(f"{shape}: outside {o}/{n}")
with open(prefix + ".workers", "w") as f:
    for l in open(prefix + ".trace"):
        if '"type":"worker"' in l: f.write(l)
