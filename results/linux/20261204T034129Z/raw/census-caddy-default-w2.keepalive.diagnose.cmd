/work/main/bin/acceptlab-diagnose --port 60283 --load keepalive --connections 32 --rounds 3 --json
