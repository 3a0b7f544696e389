/work/main/bin/acceptlab-diagnose --port 34601 --load keepalive --connections 32 --rounds 3 --json
