/work/main/bin/acceptlab-diagnose --port 56159 --duration 1.0 --json
