/work/main/bin/acceptlab-diagnose --port 50379 --load keepalive --connections 32 --rounds 3 --json
