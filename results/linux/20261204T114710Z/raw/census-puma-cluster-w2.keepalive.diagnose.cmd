/work/main/bin/acceptlab-diagnose --port 34729 --load keepalive --connections 32 --rounds 3 --json
