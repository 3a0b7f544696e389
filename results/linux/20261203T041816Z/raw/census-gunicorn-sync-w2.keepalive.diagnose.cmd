/work/main/bin/acceptlab-diagnose --port 41343 --load keepalive --connections 32 --rounds 3 --json
