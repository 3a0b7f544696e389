/work/main/bin/acceptlab-diagnose --port 54123 --load keepalive --connections 32 --rounds 3 --json
