/work/main/bin/acceptlab-diagnose --port 32881 --load keepalive --connections 32 --rounds 3 --json
