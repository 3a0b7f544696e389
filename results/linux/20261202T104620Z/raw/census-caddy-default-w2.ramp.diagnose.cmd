/work/main/bin/acceptlab-diagnose --port 34477 --load ramp --connections 32 --rounds 3 --json
