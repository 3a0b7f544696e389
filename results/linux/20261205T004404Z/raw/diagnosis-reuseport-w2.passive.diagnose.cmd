/work/main/bin/acceptlab-diagnose --port 44203 --duration 0.5 --json
