/work/main/bin/acceptlab-diagnose --port 40441 --load keepalive --connections 32 --rounds 3 --json
