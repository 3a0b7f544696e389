/work/main/bin/acceptlab-diagnose --port 37487 --load keepalive --connections 32 --rounds 3 --json
