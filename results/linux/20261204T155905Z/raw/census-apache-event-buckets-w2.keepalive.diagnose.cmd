/work/main/bin/acceptlab-diagnose --port 35185 --load keepalive --connections 32 --rounds 3 --json
