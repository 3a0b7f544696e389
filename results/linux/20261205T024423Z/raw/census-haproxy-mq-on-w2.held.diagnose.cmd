/work/main/bin/acceptlab-diagnose --port 43779 --duration 1.0 --json
