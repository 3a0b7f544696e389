/work/main/bin/acceptlab-diagnose --port 43865 --duration 1.0 --json
