/work/main/bin/acceptlab-diagnose --port 58175 --duration 1.0 --json
