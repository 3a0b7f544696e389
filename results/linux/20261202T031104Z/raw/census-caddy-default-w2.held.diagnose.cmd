/work/wt/dev/bin/acceptlab-diagnose --port 59553 --duration 1.0 --json
