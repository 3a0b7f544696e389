/work/main/bin/acceptlab-diagnose --port 39131 --load ramp --connections 32 --rounds 3 --tcp --json
