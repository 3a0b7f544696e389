/work/main/bin/acceptlab-diagnose --port 54151 --load ramp --connections 32 --rounds 3 --json
