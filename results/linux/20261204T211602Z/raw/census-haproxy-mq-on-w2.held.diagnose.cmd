/work/main/bin/acceptlab-diagnose --port 51711 --duration 1.0 --json
