/work/main/bin/acceptlab-diagnose --port 47381 --load keepalive --connections 32 --rounds 3 --json
