/work/main/bin/acceptlab-diagnose --port 37521 --load ramp --connections 32 --rounds 3 --json
