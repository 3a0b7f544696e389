/work/main/bin/acceptlab-diagnose --port 51223 --load keepalive --connections 32 --rounds 3 --json
