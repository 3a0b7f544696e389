/work/main/bin/acceptlab-diagnose --port 60553 --load keepalive --connections 32 --rounds 3 --json
