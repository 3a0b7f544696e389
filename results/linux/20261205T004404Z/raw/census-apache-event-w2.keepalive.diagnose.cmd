/work/main/bin/acceptlab-diagnose --port 50221 --load keepalive --connections 32 --rounds 3 --json
