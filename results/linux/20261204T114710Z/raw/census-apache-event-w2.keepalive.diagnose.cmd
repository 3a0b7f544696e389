/work/main/bin/acceptlab-diagnose --port 37399 --load keepalive --connections 32 --rounds 3 --json
