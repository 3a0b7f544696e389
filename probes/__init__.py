"""probes: what measures. The C probe client (probe.c and its parts, built
into bin/acceptlab-probe) and the Python that drives the measurements:

  harness     starting and stopping servers, the probe, wrk, the tracer;
              the clean-up registry
  studies/    one module per study: its steps and its row format
  campaign    the campaign driver (`make measure`): python3 -m probes.campaign
  soak        `make soak`: python3 -m probes.soak
  synflood    raw SYNs from a raw socket: python3 -m probes.synflood
  peers/      servers nobody here wrote (nginx, HAProxy, Node.js cluster):
              python3 -m probes.peers.peers

Every entry point runs as a module from the repository's top. What probes
shares with report, models and ci (the arms table, the balance bars, wrk's
output, the statistics) is in the acceptlab package.
"""
