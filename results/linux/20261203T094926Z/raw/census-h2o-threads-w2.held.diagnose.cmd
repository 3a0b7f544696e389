/work/main/bin/acceptlab-diagnose --port 40043 --duration 1.0 --json
