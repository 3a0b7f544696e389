/work/main/bin/acceptlab-diagnose --port 44597 --load ramp --connections 32 --rounds 3 --json
