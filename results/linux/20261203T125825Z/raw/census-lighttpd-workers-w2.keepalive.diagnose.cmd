/work/main/bin/acceptlab-diagnose --port 49547 --load keepalive --connections 32 --rounds 3 --json
