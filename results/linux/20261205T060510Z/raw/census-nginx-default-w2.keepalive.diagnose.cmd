/work/main/bin/acceptlab-diagnose --port 38375 --load keepalive --connections 32 --rounds 3 --json
