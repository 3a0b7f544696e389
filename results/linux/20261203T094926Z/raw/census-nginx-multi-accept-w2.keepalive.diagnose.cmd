/work/main/bin/acceptlab-diagnose --port 60881 --load keepalive --connections 32 --rounds 3 --json
