/work/main/bin/acceptlab-diagnose --port 45347 --load ramp --connections 32 --rounds 3 --json
