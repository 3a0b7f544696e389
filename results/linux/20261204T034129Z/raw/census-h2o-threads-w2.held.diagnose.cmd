/work/main/bin/acceptlab-diagnose --port 54673 --duration 1.0 --json
