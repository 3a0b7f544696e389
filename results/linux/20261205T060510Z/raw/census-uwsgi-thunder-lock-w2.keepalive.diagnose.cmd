/work/main/bin/acceptlab-diagnose --port 47971 --load keepalive --connections 32 --rounds 3 --json
