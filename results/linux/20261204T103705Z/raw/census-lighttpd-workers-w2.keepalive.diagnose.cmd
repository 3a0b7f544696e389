/work/main/bin/acceptlab-diagnose --port 59297 --load keepalive --connections 32 --rounds 3 --json
