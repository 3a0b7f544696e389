"""models: the mechanism models. The C ones (reuseport_model.c,
exclusive_model.c, built into bin/) and the analytic and simulation models
of accept skew: skew (the command line and the campaign's models study:
python3 -m models.skew), spread (the hash-spread model), race (the
accept-race simulation), skew_io (their input error). See models/README.md.
"""
