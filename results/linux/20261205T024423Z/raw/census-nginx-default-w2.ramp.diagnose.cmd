/work/main/bin/acceptlab-diagnose --port 45009 --load ramp --connections 32 --rounds 3 --json
