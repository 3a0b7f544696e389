/work/main/bin/acceptlab-diagnose --port 45177 --load ramp --connections 32 --rounds 3 --json
