/work/main/bin/acceptlab-diagnose --port 39281 --load keepalive --connections 32 --rounds 3 --json
