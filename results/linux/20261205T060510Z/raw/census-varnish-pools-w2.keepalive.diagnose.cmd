/work/main/bin/acceptlab-diagnose --port 60053 --load keepalive --connections 32 --rounds 3 --json
