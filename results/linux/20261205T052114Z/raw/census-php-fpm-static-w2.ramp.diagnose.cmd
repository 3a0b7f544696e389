/work/main/bin/acceptlab-diagnose --port 56233 --load ramp --connections 32 --rounds 3 --tcp --json
