/work/main/bin/acceptlab-diagnose --port 41187 --duration 0.5 --json
