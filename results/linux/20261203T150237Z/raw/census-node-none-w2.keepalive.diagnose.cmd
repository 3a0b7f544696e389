/work/main/bin/acceptlab-diagnose --port 39735 --load keepalive --connections 32 --rounds 3 --json
