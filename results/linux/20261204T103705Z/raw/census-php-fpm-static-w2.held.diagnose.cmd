/work/main/bin/acceptlab-diagnose --port 43589 --duration 1.0 --json
