/work/main/bin/acceptlab-diagnose --port 56849 --load ramp --connections 32 --rounds 3 --json
