/work/main/bin/acceptlab-diagnose --port 52295 --load keepalive --connections 32 --rounds 3 --json
