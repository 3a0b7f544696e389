/work/main/bin/acceptlab-diagnose --port 36729 --load ramp --connections 32 --rounds 3 --json
