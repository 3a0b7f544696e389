/work/main/bin/acceptlab-diagnose --port 43705 --load keepalive --connections 32 --rounds 3 --json
