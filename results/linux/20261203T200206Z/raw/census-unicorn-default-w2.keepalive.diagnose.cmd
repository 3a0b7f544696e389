/work/main/bin/acceptlab-diagnose --port 58207 --load keepalive --connections 32 --rounds 3 --json
