/work/main/bin/acceptlab-diagnose --port 54753 --load keepalive --connections 32 --rounds 3 --json
