/work/main/bin/acceptlab-diagnose --port 53015 --load keepalive --connections 32 --rounds 3 --json
