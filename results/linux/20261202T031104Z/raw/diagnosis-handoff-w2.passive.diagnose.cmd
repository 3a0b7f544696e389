/work/wt/dev/bin/acceptlab-diagnose --port 44593 --duration 0.5 --json
