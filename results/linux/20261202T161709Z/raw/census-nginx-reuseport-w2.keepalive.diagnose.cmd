/work/main/bin/acceptlab-diagnose --port 50799 --load keepalive --connections 32 --rounds 3 --json
