/work/main/bin/acceptlab-diagnose --port 46809 --load keepalive --connections 32 --rounds 3 --json
