/work/wt/dev/bin/acceptlab-diagnose --port 33243 --duration 0.5 --json
