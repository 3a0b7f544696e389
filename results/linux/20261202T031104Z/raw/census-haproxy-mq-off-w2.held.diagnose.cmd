/work/wt/dev/bin/acceptlab-diagnose --port 57385 --duration 1.0 --json
