/work/main/bin/acceptlab-diagnose --port 41205 --load keepalive --connections 32 --rounds 3 --json
