/work/main/bin/acceptlab-diagnose --port 39381 --load ramp --connections 32 --rounds 3 --json
