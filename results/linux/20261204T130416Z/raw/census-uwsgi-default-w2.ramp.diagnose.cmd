/work/main/bin/acceptlab-diagnose --port 45127 --load ramp --connections 32 --rounds 3 --json
