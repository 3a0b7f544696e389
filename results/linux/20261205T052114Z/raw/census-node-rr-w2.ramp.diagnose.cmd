/work/main/bin/acceptlab-diagnose --port 37411 --load ramp --connections 32 --rounds 3 --json
