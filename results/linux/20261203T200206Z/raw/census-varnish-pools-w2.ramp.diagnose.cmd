/work/main/bin/acceptlab-diagnose --port 39315 --load ramp --connections 32 --rounds 3 --json
