/work/main/bin/acceptlab-diagnose --port 37529 --load keepalive --connections 32 --rounds 3 --json
