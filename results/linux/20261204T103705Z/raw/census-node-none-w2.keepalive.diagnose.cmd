/work/main/bin/acceptlab-diagnose --port 33511 --load keepalive --connections 32 --rounds 3 --json
