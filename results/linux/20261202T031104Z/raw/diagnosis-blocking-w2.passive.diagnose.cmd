/work/wt/dev/bin/acceptlab-diagnose --port 44653 --duration 0.5 --json
