/work/main/bin/acceptlab-diagnose --port 33007 --load keepalive --connections 32 --rounds 3 --json
