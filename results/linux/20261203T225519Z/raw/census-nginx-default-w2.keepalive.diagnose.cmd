/work/main/bin/acceptlab-diagnose --port 48325 --load keepalive --connections 32 --rounds 3 --json
