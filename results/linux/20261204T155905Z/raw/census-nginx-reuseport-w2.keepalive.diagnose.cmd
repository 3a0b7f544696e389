/work/main/bin/acceptlab-diagnose --port 45831 --load keepalive --connections 32 --rounds 3 --json
