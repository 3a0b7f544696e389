/work/main/bin/acceptlab-diagnose --port 48985 --duration 1.0 --json
