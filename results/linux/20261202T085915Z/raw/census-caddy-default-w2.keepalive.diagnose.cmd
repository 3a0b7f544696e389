/work/main/bin/acceptlab-diagnose --port 44427 --load keepalive --connections 32 --rounds 3 --json
