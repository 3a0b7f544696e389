/work/main/bin/acceptlab-diagnose --port 37411 --load keepalive --connections 32 --rounds 3 --json
