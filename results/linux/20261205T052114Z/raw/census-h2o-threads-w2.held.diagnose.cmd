/work/main/bin/acceptlab-diagnose --port 32857 --duration 1.0 --json
