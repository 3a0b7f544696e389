/work/main/bin/acceptlab-diagnose --port 37881 --load keepalive --connections 32 --rounds 3 --json
