/work/main/bin/acceptlab-diagnose --port 40319 --duration 0.5 --json
