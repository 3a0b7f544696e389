/work/main/bin/acceptlab-diagnose --port 52807 --load ramp --connections 32 --rounds 3 --json
