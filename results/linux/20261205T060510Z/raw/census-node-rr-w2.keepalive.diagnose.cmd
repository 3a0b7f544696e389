/work/main/bin/acceptlab-diagnose --port 39901 --load keepalive --connections 32 --rounds 3 --json
