/work/main/bin/acceptlab-diagnose --port 57521 --load keepalive --connections 32 --rounds 3 --json
