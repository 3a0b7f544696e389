/work/main/bin/acceptlab-diagnose --port 33263 --load ramp --connections 32 --rounds 3 --json
