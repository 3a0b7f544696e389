/work/main/bin/acceptlab-diagnose --port 40065 --load ramp --connections 32 --rounds 3 --json
