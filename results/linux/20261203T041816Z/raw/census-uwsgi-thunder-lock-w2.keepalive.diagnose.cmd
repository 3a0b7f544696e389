/work/main/bin/acceptlab-diagnose --port 33989 --load keepalive --connections 32 --rounds 3 --json
