/work/main/bin/acceptlab-diagnose --port 34489 --load keepalive --connections 32 --rounds 3 --json
