/work/main/bin/acceptlab-diagnose --port 42471 --load ramp --connections 32 --rounds 3 --json
