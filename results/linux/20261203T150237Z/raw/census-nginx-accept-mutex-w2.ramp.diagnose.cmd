/work/main/bin/acceptlab-diagnose --port 41267 --load ramp --connections 32 --rounds 3 --json
