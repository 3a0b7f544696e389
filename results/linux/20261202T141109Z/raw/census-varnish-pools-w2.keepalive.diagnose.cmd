/work/main/bin/acceptlab-diagnose --port 54503 --load keepalive --connections 32 --rounds 3 --json
