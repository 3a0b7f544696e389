/work/main/bin/acceptlab-diagnose --port 41729 --load keepalive --connections 32 --rounds 3 --json
