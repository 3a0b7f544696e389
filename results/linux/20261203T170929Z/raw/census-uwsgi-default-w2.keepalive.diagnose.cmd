/work/main/bin/acceptlab-diagnose --port 50621 --load keepalive --connections 32 --rounds 3 --json
