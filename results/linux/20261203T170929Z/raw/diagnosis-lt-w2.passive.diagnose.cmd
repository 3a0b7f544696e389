/work/main/bin/acceptlab-diagnose --port 34087 --duration 0.5 --json
