/work/main/bin/acceptlab-diagnose --port 50069 --load keepalive --connections 32 --rounds 3 --json
