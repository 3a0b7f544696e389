/work/main/bin/acceptlab-diagnose --port 33371 --load keepalive --connections 32 --rounds 3 --json
