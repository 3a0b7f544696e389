/work/main/bin/acceptlab-diagnose --port 47567 --load keepalive --connections 32 --rounds 3 --json
