/work/main/bin/acceptlab-diagnose --port 59051 --load ramp --connections 32 --rounds 3 --json
