/work/main/bin/acceptlab-diagnose --port 41747 --load keepalive --connections 32 --rounds 3 --json
