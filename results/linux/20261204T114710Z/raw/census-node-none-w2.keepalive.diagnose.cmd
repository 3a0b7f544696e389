/work/main/bin/acceptlab-diagnose --port 35261 --load keepalive --connections 32 --rounds 3 --json
