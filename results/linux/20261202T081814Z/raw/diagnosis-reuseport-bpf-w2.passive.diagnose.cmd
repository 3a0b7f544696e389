/work/main/bin/acceptlab-diagnose --port 33549 --duration 0.5 --json
