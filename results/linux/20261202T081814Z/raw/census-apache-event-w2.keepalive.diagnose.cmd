/work/main/bin/acceptlab-diagnose --port 37783 --load keepalive --connections 32 --rounds 3 --json
