/work/main/bin/acceptlab-diagnose --port 32897 --load keepalive --connections 32 --rounds 3 --json
