/work/main/bin/acceptlab-diagnose --port 41321 --load keepalive --connections 32 --rounds 3 --json
