/work/main/bin/acceptlab-diagnose --port 38447 --duration 0.5 --json
