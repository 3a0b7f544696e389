/work/main/bin/acceptlab-diagnose --port 48283 --load keepalive --connections 32 --rounds 3 --json
