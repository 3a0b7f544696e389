/work/main/bin/acceptlab-diagnose --port 36179 --load keepalive --connections 32 --rounds 3 --json
