/work/main/bin/acceptlab-diagnose --port 55439 --load ramp --connections 32 --rounds 3 --json
