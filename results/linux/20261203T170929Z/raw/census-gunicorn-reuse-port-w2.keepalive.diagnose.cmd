/work/main/bin/acceptlab-diagnose --port 39973 --load keepalive --connections 32 --rounds 3 --json
