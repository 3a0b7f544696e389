/work/main/bin/acceptlab-diagnose --port 48081 --load ramp --connections 32 --rounds 3 --json
