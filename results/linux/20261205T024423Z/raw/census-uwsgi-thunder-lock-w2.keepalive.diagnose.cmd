/work/main/bin/acceptlab-diagnose --port 48741 --load keepalive --connections 32 --rounds 3 --json
