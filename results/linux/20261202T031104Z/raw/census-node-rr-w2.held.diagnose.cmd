/work/wt/dev/bin/acceptlab-diagnose --port 48731 --duration 1.0 --json
