/work/main/bin/acceptlab-diagnose --port 34945 --load ramp --connections 32 --rounds 3 --json
