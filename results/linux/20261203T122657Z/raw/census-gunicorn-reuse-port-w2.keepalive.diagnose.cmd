/work/main/bin/acceptlab-diagnose --port 36959 --load keepalive --connections 32 --rounds 3 --json
