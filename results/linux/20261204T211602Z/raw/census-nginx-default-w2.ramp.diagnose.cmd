/work/main/bin/acceptlab-diagnose --port 54123 --load ramp --connections 32 --rounds 3 --json
