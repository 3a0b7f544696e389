/work/main/bin/acceptlab-diagnose --port 36179 --load ramp --connections 32 --rounds 3 --json
