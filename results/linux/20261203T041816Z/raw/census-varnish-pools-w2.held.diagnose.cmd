/work/main/bin/acceptlab-diagnose --port 50769 --duration 1.0 --json
