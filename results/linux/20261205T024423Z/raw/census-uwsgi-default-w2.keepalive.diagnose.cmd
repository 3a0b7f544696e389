/work/main/bin/acceptlab-diagnose --port 38535 --load keepalive --connections 32 --rounds 3 --json
