/work/main/bin/acceptlab-diagnose --port 39381 --load keepalive --connections 32 --rounds 3 --json
