/work/main/bin/acceptlab-diagnose --port 60053 --load ramp --connections 32 --rounds 3 --json
