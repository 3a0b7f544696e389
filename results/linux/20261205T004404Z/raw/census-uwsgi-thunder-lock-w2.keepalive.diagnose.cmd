/work/main/bin/acceptlab-diagnose --port 60037 --load keepalive --connections 32 --rounds 3 --json
