/work/main/bin/acceptlab-diagnose --port 42205 --duration 0.5 --json
