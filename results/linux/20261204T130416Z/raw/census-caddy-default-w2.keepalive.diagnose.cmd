/work/main/bin/acceptlab-diagnose --port 58999 --load keepalive --connections 32 --rounds 3 --json
