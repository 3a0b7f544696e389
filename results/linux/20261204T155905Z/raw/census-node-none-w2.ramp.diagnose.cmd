/work/main/bin/acceptlab-diagnose --port 45749 --load ramp --connections 32 --rounds 3 --json
