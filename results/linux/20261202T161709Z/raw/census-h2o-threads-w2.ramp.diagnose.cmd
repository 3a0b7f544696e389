/work/main/bin/acceptlab-diagnose --port 60695 --load ramp --connections 32 --rounds 3 --json
