/work/main/bin/acceptlab-diagnose --port 36253 --duration 1.0 --json
