/work/main/bin/acceptlab-diagnose --port 39625 --load keepalive --connections 32 --rounds 3 --json
