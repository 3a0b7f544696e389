/work/main/bin/acceptlab-diagnose --port 51297 --load keepalive --connections 32 --rounds 3 --json
