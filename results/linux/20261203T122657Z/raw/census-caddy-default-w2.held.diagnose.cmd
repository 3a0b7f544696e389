/work/main/bin/acceptlab-diagnose --port 58811 --duration 1.0 --json
