/work/main/bin/acceptlab-diagnose --port 36931 --load ramp --connections 32 --rounds 3 --json
