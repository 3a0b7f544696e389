/work/main/bin/acceptlab-diagnose --port 34601 --load ramp --connections 32 --rounds 3 --json
