/work/main/bin/acceptlab-diagnose --port 37529 --load ramp --connections 32 --rounds 3 --json
