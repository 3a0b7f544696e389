/work/main/bin/acceptlab-diagnose --port 36729 --load keepalive --connections 32 --rounds 3 --json
