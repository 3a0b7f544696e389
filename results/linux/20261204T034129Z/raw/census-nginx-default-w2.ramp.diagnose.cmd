/work/main/bin/acceptlab-diagnose --port 46135 --load ramp --connections 32 --rounds 3 --json
