/work/main/bin/acceptlab-diagnose --port 41835 --load keepalive --connections 32 --rounds 3 --json
