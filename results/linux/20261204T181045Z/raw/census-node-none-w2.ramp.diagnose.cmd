/work/main/bin/acceptlab-diagnose --port 37355 --load ramp --connections 32 --rounds 3 --json
