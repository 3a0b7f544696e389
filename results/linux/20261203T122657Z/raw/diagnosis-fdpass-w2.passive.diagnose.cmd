/work/main/bin/acceptlab-diagnose --port 32849 --duration 0.5 --json
