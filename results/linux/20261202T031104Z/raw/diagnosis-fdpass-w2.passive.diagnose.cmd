/work/wt/dev/bin/acceptlab-diagnose --port 42793 --duration 0.5 --json
