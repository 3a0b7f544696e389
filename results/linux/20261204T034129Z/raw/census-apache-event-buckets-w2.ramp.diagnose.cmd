/work/main/bin/acceptlab-diagnose --port 52577 --load ramp --connections 32 --rounds 3 --json
