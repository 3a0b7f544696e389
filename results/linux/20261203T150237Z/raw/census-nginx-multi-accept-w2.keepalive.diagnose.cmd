/work/main/bin/acceptlab-diagnose --port 51905 --load keepalive --connections 32 --rounds 3 --json
