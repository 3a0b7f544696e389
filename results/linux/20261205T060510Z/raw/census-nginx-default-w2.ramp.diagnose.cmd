/work/main/bin/acceptlab-diagnose --port 38375 --load ramp --connections 32 --rounds 3 --json
