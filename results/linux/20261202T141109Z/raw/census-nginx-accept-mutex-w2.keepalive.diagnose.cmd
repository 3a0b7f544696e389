/work/main/bin/acceptlab-diagnose --port 54565 --load keepalive --connections 32 --rounds 3 --json
