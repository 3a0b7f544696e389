/work/main/bin/acceptlab-diagnose --port 32857 --load ramp --connections 32 --rounds 3 --json
