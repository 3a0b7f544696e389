/work/main/bin/acceptlab-diagnose --port 50737 --duration 1.0 --json
