/work/main/bin/acceptlab-diagnose --port 39103 --load ramp --connections 32 --rounds 3 --json
