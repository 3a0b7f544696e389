/work/main/bin/acceptlab-diagnose --port 55285 --load keepalive --connections 32 --rounds 3 --json
