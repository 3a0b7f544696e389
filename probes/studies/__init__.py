"""The campaign's studies, one module each (probes/campaign.py runs them).

A study module has NAME (its results file is NAME.jsonl), steps(args,
raw_dir) yielding (label, step, error row keys) with step() returning
(rows, progress text) or raising StepFailed (probes/harness/lifecycle.py),
meta(args) giving its parameters for meta.json, and may have finish(path), run once every step of
the study is done. Helpers more than one study uses are in common.py.
"""
