/work/main/bin/acceptlab-diagnose --port 37901 --load ramp --connections 32 --rounds 3 --json
