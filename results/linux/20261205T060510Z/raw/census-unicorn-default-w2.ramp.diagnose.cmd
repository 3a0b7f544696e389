/work/main/bin/acceptlab-diagnose --port 56047 --load ramp --connections 32 --rounds 3 --json
