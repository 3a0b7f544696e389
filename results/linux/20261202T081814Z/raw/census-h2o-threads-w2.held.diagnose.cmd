/work/main/bin/acceptlab-diagnose --port 38613 --duration 1.0 --json
