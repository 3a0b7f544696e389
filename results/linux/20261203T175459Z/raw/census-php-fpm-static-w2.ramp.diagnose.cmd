/work/main/bin/acceptlab-diagnose --port 58049 --load ramp --connections 32 --rounds 3 --tcp --json
