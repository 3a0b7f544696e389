/work/main/bin/acceptlab-diagnose --port 36459 --load keepalive --connections 32 --rounds 3 --json
