/work/main/bin/acceptlab-diagnose --port 51069 --load ramp --connections 32 --rounds 3 --tcp --json
