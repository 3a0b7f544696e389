/work/main/bin/acceptlab-diagnose --port 47579 --duration 1.0 --json
