/work/main/bin/acceptlab-diagnose --port 39443 --load keepalive --connections 32 --rounds 3 --json
