/work/main/bin/acceptlab-diagnose --port 34631 --duration 0.5 --json
