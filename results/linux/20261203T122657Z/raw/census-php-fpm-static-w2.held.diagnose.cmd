/work/main/bin/acceptlab-diagnose --port 45829 --duration 1.0 --json
