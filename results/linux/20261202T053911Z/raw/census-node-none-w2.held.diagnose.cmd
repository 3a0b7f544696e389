/work/main/bin/acceptlab-diagnose --port 56759 --duration 1.0 --json
