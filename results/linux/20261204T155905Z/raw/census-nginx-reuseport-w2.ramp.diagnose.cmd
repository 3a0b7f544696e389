/work/main/bin/acceptlab-diagnose --port 45831 --load ramp --connections 32 --rounds 3 --json
