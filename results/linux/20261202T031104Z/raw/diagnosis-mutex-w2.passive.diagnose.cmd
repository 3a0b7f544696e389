/work/wt/dev/bin/acceptlab-diagnose --port 38835 --duration 0.5 --json
