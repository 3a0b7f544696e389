/work/main/bin/acceptlab-diagnose --port 43865 --load keepalive --connections 32 --rounds 3 --json
