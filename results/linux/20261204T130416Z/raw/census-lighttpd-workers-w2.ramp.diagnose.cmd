/work/main/bin/acceptlab-diagnose --port 51741 --load ramp --connections 32 --rounds 3 --json
