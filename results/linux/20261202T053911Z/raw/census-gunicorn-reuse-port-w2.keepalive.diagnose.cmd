/work/main/bin/acceptlab-diagnose --port 58961 --load keepalive --connections 32 --rounds 3 --json
