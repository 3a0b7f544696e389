/work/main/bin/acceptlab-diagnose --port 41929 --load keepalive --connections 32 --rounds 3 --json
