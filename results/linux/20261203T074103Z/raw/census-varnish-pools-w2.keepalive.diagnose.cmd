/work/main/bin/acceptlab-diagnose --port 40593 --load keepalive --connections 32 --rounds 3 --json
