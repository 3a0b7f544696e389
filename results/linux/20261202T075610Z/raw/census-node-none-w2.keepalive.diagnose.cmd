/work/main/bin/acceptlab-diagnose --port 45565 --load keepalive --connections 32 --rounds 3 --json
