/work/main/bin/acceptlab-diagnose --port 43727 --duration 0.5 --json
