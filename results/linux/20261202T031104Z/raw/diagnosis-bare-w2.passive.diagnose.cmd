/work/wt/dev/bin/acceptlab-diagnose --port 37113 --duration 0.5 --json
