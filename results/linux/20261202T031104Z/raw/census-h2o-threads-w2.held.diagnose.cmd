/work/wt/dev/bin/acceptlab-diagnose --port 41143 --duration 1.0 --json
