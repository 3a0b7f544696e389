/work/wt/dev/bin/acceptlab-diagnose --port 49795 --duration 1.0 --json
