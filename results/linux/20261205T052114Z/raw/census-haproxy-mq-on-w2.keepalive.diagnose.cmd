/work/main/bin/acceptlab-diagnose --port 56439 --load keepalive --connections 32 --rounds 3 --json
