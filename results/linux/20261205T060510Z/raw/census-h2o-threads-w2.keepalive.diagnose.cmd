/work/main/bin/acceptlab-diagnose --port 57399 --load keepalive --connections 32 --rounds 3 --json
