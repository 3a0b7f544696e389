/work/wt/dev/bin/acceptlab-diagnose --port 39555 --duration 0.5 --json
