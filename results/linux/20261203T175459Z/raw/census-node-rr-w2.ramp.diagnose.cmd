/work/main/bin/acceptlab-diagnose --port 40207 --load ramp --connections 32 --rounds 3 --json
