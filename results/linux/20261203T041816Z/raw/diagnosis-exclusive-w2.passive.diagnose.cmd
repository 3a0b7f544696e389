/work/main/bin/acceptlab-diagnose --port 33729 --duration 0.5 --json
