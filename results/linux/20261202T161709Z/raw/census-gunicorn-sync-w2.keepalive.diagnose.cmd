/work/main/bin/acceptlab-diagnose --port 51057 --load keepalive --connections 32 --rounds 3 --json
