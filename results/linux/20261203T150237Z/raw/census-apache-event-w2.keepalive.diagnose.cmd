/work/main/bin/acceptlab-diagnose --port 52011 --load keepalive --connections 32 --rounds 3 --json
