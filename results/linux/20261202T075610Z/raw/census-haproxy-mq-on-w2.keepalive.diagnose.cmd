/work/main/bin/acceptlab-diagnose --port 49847 --load keepalive --connections 32 --rounds 3 --json
