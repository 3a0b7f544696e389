/work/main/bin/acceptlab-diagnose --port 43189 --duration 0.5 --json
