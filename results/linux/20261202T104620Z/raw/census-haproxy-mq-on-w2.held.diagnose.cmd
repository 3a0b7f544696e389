/work/main/bin/acceptlab-diagnose --port 44725 --duration 1.0 --json
