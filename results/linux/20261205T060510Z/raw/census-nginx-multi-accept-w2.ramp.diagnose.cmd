/work/main/bin/acceptlab-diagnose --port 41929 --load ramp --connections 32 --rounds 3 --json
