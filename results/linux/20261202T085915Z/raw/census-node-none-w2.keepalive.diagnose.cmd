/work/main/bin/acceptlab-diagnose --port 43245 --load keepalive --connections 32 --rounds 3 --json
