/work/main/bin/acceptlab-diagnose --port 43685 --load ramp --connections 32 --rounds 3 --json
