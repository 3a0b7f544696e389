/work/main/bin/acceptlab-diagnose --port 47517 --duration 1.0 --json
