/work/main/bin/acceptlab-diagnose --port 57763 --load keepalive --connections 32 --rounds 3 --json
