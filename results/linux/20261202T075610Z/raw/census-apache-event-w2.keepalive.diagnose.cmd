/work/main/bin/acceptlab-diagnose --port 43463 --load keepalive --connections 32 --rounds 3 --json
