/work/main/bin/acceptlab-diagnose --port 41267 --load keepalive --connections 32 --rounds 3 --json
