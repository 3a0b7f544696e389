/work/main/bin/acceptlab-diagnose --port 57051 --load ramp --connections 32 --rounds 3 --json
