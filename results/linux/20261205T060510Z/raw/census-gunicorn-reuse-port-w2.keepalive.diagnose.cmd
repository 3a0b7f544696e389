/work/main/bin/acceptlab-diagnose --port 50873 --load keepalive --connections 32 --rounds 3 --json
