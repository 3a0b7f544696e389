/work/main/bin/acceptlab-diagnose --port 37455 --load keepalive --connections 32 --rounds 3 --json
