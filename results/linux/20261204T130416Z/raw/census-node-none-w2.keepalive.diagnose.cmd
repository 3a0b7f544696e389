/work/main/bin/acceptlab-diagnose --port 35401 --load keepalive --connections 32 --rounds 3 --json
