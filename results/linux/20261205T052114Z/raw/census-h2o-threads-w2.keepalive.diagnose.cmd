/work/main/bin/acceptlab-diagnose --port 32857 --load keepalive --connections 32 --rounds 3 --json
