/work/main/bin/acceptlab-diagnose --port 55705 --load ramp --connections 32 --rounds 3 --json
