/work/main/bin/acceptlab-diagnose --port 33093 --load ramp --connections 32 --rounds 3 --json
