/work/main/bin/acceptlab-diagnose --port 34677 --load keepalive --connections 32 --rounds 3 --json
