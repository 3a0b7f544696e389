/work/main/bin/acceptlab-diagnose --port 51297 --load ramp --connections 32 --rounds 3 --json
