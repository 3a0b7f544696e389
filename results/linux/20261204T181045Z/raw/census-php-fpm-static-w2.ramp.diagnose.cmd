/work/main/bin/acceptlab-diagnose --port 41323 --load ramp --connections 32 --rounds 3 --tcp --json
