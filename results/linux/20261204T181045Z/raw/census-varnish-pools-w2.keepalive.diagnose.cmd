/work/main/bin/acceptlab-diagnose --port 52709 --load keepalive --connections 32 --rounds 3 --json
