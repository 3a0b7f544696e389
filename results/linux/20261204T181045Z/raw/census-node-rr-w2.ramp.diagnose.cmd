/work/main/bin/acceptlab-diagnose --port 60223 --load ramp --connections 32 --rounds 3 --json
