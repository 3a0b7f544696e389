/work/main/bin/acceptlab-diagnose --port 43725 --duration 1.0 --json
