/work/main/bin/acceptlab-diagnose --port 39219 --load keepalive --connections 32 --rounds 3 --json
