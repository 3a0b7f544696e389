/work/main/bin/acceptlab-diagnose --port 34515 --load keepalive --connections 32 --rounds 3 --json
