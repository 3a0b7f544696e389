/work/main/bin/acceptlab-diagnose --port 60045 --load ramp --connections 32 --rounds 3 --json
