/work/main/bin/acceptlab-diagnose --port 46843 --duration 0.5 --json
