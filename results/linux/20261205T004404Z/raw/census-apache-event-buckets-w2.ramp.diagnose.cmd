/work/main/bin/acceptlab-diagnose --port 52743 --load ramp --connections 32 --rounds 3 --json
