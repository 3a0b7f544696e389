/work/main/bin/acceptlab-diagnose --port 56251 --duration 1.0 --json
