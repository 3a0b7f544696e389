/work/main/bin/acceptlab-diagnose --port 39757 --load keepalive --connections 32 --rounds 3 --json
