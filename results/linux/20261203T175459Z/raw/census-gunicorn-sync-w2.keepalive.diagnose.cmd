/work/main/bin/acceptlab-diagnose --port 36493 --load keepalive --connections 32 --rounds 3 --json
