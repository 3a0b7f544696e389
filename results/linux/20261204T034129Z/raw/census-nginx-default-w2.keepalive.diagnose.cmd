/work/main/bin/acceptlab-diagnose --port 46135 --load keepalive --connections 32 --rounds 3 --json
