/work/main/bin/acceptlab-diagnose --port 54055 --duration 1.0 --json
