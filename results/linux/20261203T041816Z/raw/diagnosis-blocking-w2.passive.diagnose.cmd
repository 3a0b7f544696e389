/work/main/bin/acceptlab-diagnose --port 34107 --duration 0.5 --json
