/work/main/bin/acceptlab-diagnose --port 45597 --load keepalive --connections 32 --rounds 3 --json
