/work/main/bin/acceptlab-diagnose --port 51369 --load keepalive --connections 32 --rounds 3 --json
