/work/main/bin/acceptlab-diagnose --port 33093 --load keepalive --connections 32 --rounds 3 --json
