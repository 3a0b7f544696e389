/work/main/bin/acceptlab-diagnose --port 36499 --load keepalive --connections 32 --rounds 3 --json
