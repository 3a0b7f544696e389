/work/main/bin/acceptlab-diagnose --port 40141 --load keepalive --connections 32 --rounds 3 --json
