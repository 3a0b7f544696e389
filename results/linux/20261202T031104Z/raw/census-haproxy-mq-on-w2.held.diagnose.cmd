/work/wt/dev/bin/acceptlab-diagnose --port 51507 --duration 1.0 --json
