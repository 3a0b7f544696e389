/work/main/bin/acceptlab-diagnose --port 48465 --load keepalive --connections 32 --rounds 3 --json
