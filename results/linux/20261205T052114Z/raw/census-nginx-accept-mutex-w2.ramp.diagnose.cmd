/work/main/bin/acceptlab-diagnose --port 36637 --load ramp --connections 32 --rounds 3 --json
