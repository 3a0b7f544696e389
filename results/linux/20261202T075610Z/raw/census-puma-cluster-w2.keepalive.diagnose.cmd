/work/main/bin/acceptlab-diagnose --port 49147 --load keepalive --connections 32 --rounds 3 --json
