/work/main/bin/acceptlab-diagnose --port 33511 --load ramp --connections 32 --rounds 3 --json
