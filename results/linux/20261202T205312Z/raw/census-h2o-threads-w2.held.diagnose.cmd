/work/main/bin/acceptlab-diagnose --port 60171 --duration 1.0 --json
