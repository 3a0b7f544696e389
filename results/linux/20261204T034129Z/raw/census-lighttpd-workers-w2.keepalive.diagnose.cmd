/work/main/bin/acceptlab-diagnose --port 45347 --load keepalive --connections 32 --rounds 3 --json
