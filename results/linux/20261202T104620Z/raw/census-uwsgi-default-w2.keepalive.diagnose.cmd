/work/main/bin/acceptlab-diagnose --port 54039 --load keepalive --connections 32 --rounds 3 --json
