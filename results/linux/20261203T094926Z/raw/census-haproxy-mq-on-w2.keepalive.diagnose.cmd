/work/main/bin/acceptlab-diagnose --port 60145 --load keepalive --connections 32 --rounds 3 --json
