/work/main/bin/acceptlab-diagnose --port 48439 --load ramp --connections 32 --rounds 3 --tcp --json
