/work/main/bin/acceptlab-diagnose --port 54693 --load keepalive --connections 32 --rounds 3 --json
