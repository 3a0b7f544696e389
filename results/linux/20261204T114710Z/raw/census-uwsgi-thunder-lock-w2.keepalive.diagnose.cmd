/work/main/bin/acceptlab-diagnose --port 38923 --load keepalive --connections 32 --rounds 3 --json
