/work/wt/dev/bin/acceptlab-diagnose --port 40537 --duration 1.0 --json
