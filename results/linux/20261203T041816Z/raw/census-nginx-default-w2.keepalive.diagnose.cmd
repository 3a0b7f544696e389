/work/main/bin/acceptlab-diagnose --port 51975 --load keepalive --connections 32 --rounds 3 --json
