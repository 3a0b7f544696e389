/work/main/bin/acceptlab-diagnose --port 39789 --load keepalive --connections 32 --rounds 3 --json
