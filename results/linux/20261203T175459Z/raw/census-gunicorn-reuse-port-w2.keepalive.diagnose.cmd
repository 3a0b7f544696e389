/work/main/bin/acceptlab-diagnose --port 40375 --load keepalive --connections 32 --rounds 3 --json
