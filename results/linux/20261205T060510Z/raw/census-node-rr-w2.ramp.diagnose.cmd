/work/main/bin/acceptlab-diagnose --port 39901 --load ramp --connections 32 --rounds 3 --json
