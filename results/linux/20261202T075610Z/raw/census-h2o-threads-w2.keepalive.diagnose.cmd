/work/main/bin/acceptlab-diagnose --port 35497 --load keepalive --connections 32 --rounds 3 --json
