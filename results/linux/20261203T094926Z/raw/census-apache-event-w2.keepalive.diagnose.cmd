/work/main/bin/acceptlab-diagnose --port 39713 --load keepalive --connections 32 --rounds 3 --json
