/work/main/bin/acceptlab-diagnose --port 35859 --load ramp --connections 32 --rounds 3 --json
