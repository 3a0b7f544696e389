/work/main/bin/acceptlab-diagnose --port 50379 --duration 1.0 --json
