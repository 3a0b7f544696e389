/work/main/bin/acceptlab-diagnose --port 44635 --duration 0.5 --json
