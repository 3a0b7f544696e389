/work/main/bin/acceptlab-diagnose --port 54531 --load keepalive --connections 32 --rounds 3 --json
