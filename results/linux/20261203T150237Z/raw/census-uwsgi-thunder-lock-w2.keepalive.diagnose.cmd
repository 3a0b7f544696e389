/work/main/bin/acceptlab-diagnose --port 53063 --load keepalive --connections 32 --rounds 3 --json
