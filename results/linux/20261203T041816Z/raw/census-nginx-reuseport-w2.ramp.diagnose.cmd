/work/main/bin/acceptlab-diagnose --port 39789 --load ramp --connections 32 --rounds 3 --json
