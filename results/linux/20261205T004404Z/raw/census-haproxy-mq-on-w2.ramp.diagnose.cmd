/work/main/bin/acceptlab-diagnose --port 57043 --load ramp --connections 32 --rounds 3 --json
