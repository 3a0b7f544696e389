/work/main/bin/acceptlab-diagnose --port 45009 --load keepalive --connections 32 --rounds 3 --json
