/work/main/bin/acceptlab-diagnose --port 60283 --load ramp --connections 32 --rounds 3 --json
