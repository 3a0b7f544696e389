/work/main/bin/acceptlab-diagnose --port 57925 --load keepalive --connections 32 --rounds 3 --json
