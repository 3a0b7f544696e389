/work/main/bin/acceptlab-diagnose --port 43795 --duration 0.5 --json
