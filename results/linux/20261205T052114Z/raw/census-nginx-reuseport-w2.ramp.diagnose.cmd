/work/main/bin/acceptlab-diagnose --port 52079 --load ramp --connections 32 --rounds 3 --json
