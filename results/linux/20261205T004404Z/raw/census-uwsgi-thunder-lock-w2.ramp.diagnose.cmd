/work/main/bin/acceptlab-diagnose --port 60037 --load ramp --connections 32 --rounds 3 --json
