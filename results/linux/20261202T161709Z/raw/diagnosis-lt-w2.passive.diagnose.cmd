/work/main/bin/acceptlab-diagnose --port 39563 --duration 0.5 --json
