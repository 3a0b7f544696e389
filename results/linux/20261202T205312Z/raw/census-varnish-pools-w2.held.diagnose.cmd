/work/main/bin/acceptlab-diagnose --port 47969 --duration 1.0 --json
