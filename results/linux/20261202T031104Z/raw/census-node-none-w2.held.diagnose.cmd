/work/wt/dev/bin/acceptlab-diagnose --port 44897 --duration 1.0 --json
