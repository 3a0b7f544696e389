/work/main/bin/acceptlab-diagnose --port 38733 --load keepalive --connections 32 --rounds 3 --json
