/work/main/bin/acceptlab-diagnose --port 52709 --load ramp --connections 32 --rounds 3 --json
