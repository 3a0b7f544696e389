/work/main/bin/acceptlab-diagnose --port 45055 --duration 0.5 --json
