/work/main/bin/acceptlab-diagnose --port 55127 --load keepalive --connections 32 --rounds 3 --json
