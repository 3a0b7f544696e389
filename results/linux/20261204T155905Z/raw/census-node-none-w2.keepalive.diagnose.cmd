/work/main/bin/acceptlab-diagnose --port 45749 --load keepalive --connections 32 --rounds 3 --json
