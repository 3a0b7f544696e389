/work/main/bin/acceptlab-diagnose --port 39219 --load ramp --connections 32 --rounds 3 --json
