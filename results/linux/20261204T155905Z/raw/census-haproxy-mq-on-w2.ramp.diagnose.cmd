/work/main/bin/acceptlab-diagnose --port 43899 --load ramp --connections 32 --rounds 3 --json
