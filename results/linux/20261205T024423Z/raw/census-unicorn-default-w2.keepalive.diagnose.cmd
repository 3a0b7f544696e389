/work/main/bin/acceptlab-diagnose --port 52807 --load keepalive --connections 32 --rounds 3 --json
