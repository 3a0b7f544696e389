/work/main/bin/acceptlab-diagnose --port 32981 --duration 0.5 --json
