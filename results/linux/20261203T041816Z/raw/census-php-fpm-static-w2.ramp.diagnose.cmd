/work/main/bin/acceptlab-diagnose --port 48605 --load ramp --connections 32 --rounds 3 --tcp --json
