/work/main/bin/acceptlab-diagnose --port 45229 --duration 0.5 --json
