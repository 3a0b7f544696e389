/work/main/bin/acceptlab-diagnose --port 40921 --duration 1.0 --json
