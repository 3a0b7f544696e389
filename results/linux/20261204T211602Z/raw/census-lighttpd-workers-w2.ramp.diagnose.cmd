/work/main/bin/acceptlab-diagnose --port 34677 --load ramp --connections 32 --rounds 3 --json
