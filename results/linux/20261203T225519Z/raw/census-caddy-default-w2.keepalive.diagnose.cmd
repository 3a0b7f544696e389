/work/main/bin/acceptlab-diagnose --port 51061 --load keepalive --connections 32 --rounds 3 --json
