/work/main/bin/acceptlab-diagnose --port 37507 --duration 0.5 --json
