/work/main/bin/acceptlab-diagnose --port 34719 --duration 0.5 --json
