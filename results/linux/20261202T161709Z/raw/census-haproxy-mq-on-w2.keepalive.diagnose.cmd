/work/main/bin/acceptlab-diagnose --port 46185 --load keepalive --connections 32 --rounds 3 --json
