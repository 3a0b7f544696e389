/work/main/bin/acceptlab-diagnose --port 49455 --load ramp --connections 32 --rounds 3 --tcp --json
