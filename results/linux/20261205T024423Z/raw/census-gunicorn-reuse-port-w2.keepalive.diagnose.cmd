/work/main/bin/acceptlab-diagnose --port 49521 --load keepalive --connections 32 --rounds 3 --json
