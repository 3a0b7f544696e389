/work/main/bin/acceptlab-diagnose --port 60253 --load keepalive --connections 32 --rounds 3 --json
