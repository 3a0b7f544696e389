"""probes.harness: what the campaign's studies, the gate and the soak start
and stop, one module per job:

  lifecycle  the clean-up registry every child is registered in, signals,
             stop_all, StepFailed and die (imported by the others, never
             the reverse)
  servers    our server and the peers' (start, stop, ServerRun, what they
             printed)
  probe      bin/acceptlab-probe: its command, its rounds
  tracer     bin/acceptlab-trace beside a step
  wrk        running wrk (its output is read by acceptlab/wrk_output.py)
  cpu        process trees, pinning, CPU time and context switches, CPU hogs

Import what you use from the module that owns it
(`from probes.harness.servers import ServerRun`); nothing is re-exported here.
"""
