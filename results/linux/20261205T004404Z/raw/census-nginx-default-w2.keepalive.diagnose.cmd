/work/main/bin/acceptlab-diagnose --port 53405 --load keepalive --connections 32 --rounds 3 --json
