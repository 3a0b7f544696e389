/work/main/bin/acceptlab-diagnose --port 37021 --duration 0.5 --json
