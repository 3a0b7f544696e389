/work/main/bin/acceptlab-diagnose --port 48741 --load ramp --connections 32 --rounds 3 --json
