/work/main/bin/acceptlab-diagnose --port 48753 --duration 1.0 --json
