/work/main/bin/acceptlab-diagnose --port 35265 --load ramp --connections 32 --rounds 3 --json
