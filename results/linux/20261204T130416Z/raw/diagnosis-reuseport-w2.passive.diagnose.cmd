/work/main/bin/acceptlab-diagnose --port 37947 --duration 0.5 --json
