/work/main/bin/acceptlab-diagnose --port 37223 --load keepalive --connections 32 --rounds 3 --json
