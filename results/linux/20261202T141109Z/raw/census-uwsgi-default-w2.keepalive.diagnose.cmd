/work/main/bin/acceptlab-diagnose --port 59599 --load keepalive --connections 32 --rounds 3 --json
