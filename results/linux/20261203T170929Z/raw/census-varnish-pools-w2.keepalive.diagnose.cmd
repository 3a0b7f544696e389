/work/main/bin/acceptlab-diagnose --port 56709 --load keepalive --connections 32 --rounds 3 --json
