/work/main/bin/acceptlab-diagnose --port 41835 --load ramp --connections 32 --rounds 3 --json
