/work/main/bin/acceptlab-diagnose --port 45553 --load keepalive --connections 32 --rounds 3 --json
