/work/main/bin/acceptlab-diagnose --port 35797 --load ramp --connections 32 --rounds 3 --json
