/work/main/bin/acceptlab-diagnose --port 56935 --duration 1.0 --json
