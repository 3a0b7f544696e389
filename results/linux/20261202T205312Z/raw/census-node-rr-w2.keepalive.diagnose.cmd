/work/main/bin/acceptlab-diagnose --port 35305 --load keepalive --connections 32 --rounds 3 --json
