/work/main/bin/acceptlab-diagnose --port 45743 --load keepalive --connections 32 --rounds 3 --json
