/work/main/bin/acceptlab-diagnose --port 38981 --load ramp --connections 32 --rounds 3 --tcp --json
