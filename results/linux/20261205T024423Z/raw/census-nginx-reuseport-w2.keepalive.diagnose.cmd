/work/main/bin/acceptlab-diagnose --port 57063 --load keepalive --connections 32 --rounds 3 --json
