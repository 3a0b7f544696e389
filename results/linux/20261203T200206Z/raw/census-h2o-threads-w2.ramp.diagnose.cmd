/work/main/bin/acceptlab-diagnose --port 49925 --load ramp --connections 32 --rounds 3 --json
