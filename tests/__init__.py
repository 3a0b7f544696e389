"""tests: the pytest suites (one file per subject; conftest.py holds what they
share) and the helpers they run as modules (python3 -m tests.foreign_server,
tests.bad_targets, tests.accounting_scenarios). pytest finds the project's
packages through pytest.ini's `pythonpath = .` (the repository's top)."""
