/work/main/bin/acceptlab-diagnose --port 39713 --load ramp --connections 32 --rounds 3 --json
