/work/main/bin/acceptlab-diagnose --port 57301 --load keepalive --connections 32 --rounds 3 --json
