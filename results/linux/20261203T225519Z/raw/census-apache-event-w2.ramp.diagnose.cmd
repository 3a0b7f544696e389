/work/main/bin/acceptlab-diagnose --port 49529 --load ramp --connections 32 --rounds 3 --json
