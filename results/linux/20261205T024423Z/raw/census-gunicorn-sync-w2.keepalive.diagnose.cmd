/work/main/bin/acceptlab-diagnose --port 56885 --load keepalive --connections 32 --rounds 3 --json
