/work/main/bin/acceptlab-diagnose --port 47431 --load keepalive --connections 32 --rounds 3 --json
