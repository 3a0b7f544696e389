/work/main/bin/acceptlab-diagnose --port 40093 --load ramp --connections 32 --rounds 3 --json
