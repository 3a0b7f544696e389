/work/main/bin/acceptlab-diagnose --port 52483 --load keepalive --connections 32 --rounds 3 --json
