/work/main/bin/acceptlab-diagnose --port 40183 --duration 0.5 --json
