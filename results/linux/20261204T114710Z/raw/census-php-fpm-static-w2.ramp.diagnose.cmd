/work/main/bin/acceptlab-diagnose --port 39855 --load ramp --connections 32 --rounds 3 --tcp --json
