/work/main/bin/acceptlab-diagnose --port 46015 --load ramp --connections 32 --rounds 3 --json
