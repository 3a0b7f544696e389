/work/wt/dev/bin/acceptlab-diagnose --port 41695 --duration 0.5 --json
