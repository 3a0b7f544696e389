/work/main/bin/acceptlab-diagnose --port 40441 --duration 1.0 --json
