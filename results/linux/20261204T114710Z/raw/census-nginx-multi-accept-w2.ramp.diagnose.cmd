/work/main/bin/acceptlab-diagnose --port 59793 --load ramp --connections 32 --rounds 3 --json
