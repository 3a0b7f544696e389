/work/wt/dev/bin/acceptlab-diagnose --port 48271 --duration 1.0 --json
