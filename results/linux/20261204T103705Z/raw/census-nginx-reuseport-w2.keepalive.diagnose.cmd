/work/main/bin/acceptlab-diagnose --port 44223 --load keepalive --connections 32 --rounds 3 --json
