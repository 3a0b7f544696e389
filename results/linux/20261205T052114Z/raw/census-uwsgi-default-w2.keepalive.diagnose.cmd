/work/main/bin/acceptlab-diagnose --port 44747 --load keepalive --connections 32 --rounds 3 --json
