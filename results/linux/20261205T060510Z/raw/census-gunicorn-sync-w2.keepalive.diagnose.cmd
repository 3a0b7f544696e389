/work/main/bin/acceptlab-diagnose --port 33333 --load keepalive --connections 32 --rounds 3 --json
