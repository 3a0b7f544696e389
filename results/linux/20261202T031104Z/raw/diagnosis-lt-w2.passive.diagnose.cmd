/work/wt/dev/bin/acceptlab-diagnose --port 35261 --duration 0.5 --json
