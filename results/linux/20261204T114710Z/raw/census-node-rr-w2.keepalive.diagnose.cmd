/work/main/bin/acceptlab-diagnose --port 49341 --load keepalive --connections 32 --rounds 3 --json
