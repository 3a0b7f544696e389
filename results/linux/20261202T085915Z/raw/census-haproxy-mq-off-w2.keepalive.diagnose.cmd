/work/main/bin/acceptlab-diagnose --port 34527 --load keepalive --connections 32 --rounds 3 --json
