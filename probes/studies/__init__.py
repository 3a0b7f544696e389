"""The campaign's studies, one module each (probes/campaign.py runs them).

Every study receives the campaign's plan (probes/plan.py: one typed object
built once from the command line) and picks its own arms from
acceptlab/arms.py with it. A study module has:

  NAME                 its name; its results file is NAME.jsonl
  arms_of(plan)        the arms it runs under plan (the table's names, and an
                       anchor's name where it has one)
  meta(plan)           its parameters for meta.json
  steps(plan, raw_dir) yields (label, step, error row keys), step()
                       returning (rows, progress text) or raising StepFailed
                       (probes/harness/lifecycle.py)

and may have finish(path), run once every step of the study is done;
outcome(path, plan), for a stopping rule over rounds (the rounds
themselves run inside the study's steps); peer_configs(plan), the peers' configurations it
starts (probes/peers/peers.py, for meta.json's tool versions); ANCHOR_ARMS
({arm: peer configuration}, names --bench-arms accepts beyond the table);
TAKES_BENCH_ARMS, when --bench-arms chooses its arms. Helpers more than one
study uses are in common.py.
"""
