/work/main/bin/acceptlab-diagnose --port 39841 --duration 0.5 --json
