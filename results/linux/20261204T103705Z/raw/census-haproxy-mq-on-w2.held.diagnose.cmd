/work/main/bin/acceptlab-diagnose --port 60159 --duration 1.0 --json
