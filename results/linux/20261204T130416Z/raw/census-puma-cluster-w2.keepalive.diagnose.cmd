/work/main/bin/acceptlab-diagnose --port 36931 --load keepalive --connections 32 --rounds 3 --json
