/work/main/bin/acceptlab-diagnose --port 39839 --load keepalive --connections 32 --rounds 3 --json
