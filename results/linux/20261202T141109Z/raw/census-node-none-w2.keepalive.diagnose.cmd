/work/main/bin/acceptlab-diagnose --port 59051 --load keepalive --connections 32 --rounds 3 --json
