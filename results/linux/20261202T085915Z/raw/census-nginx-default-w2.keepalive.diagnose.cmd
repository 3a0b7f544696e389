/work/main/bin/acceptlab-diagnose --port 43379 --load keepalive --connections 32 --rounds 3 --json
