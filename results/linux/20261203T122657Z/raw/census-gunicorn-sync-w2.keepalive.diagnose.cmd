/work/main/bin/acceptlab-diagnose --port 35265 --load keepalive --connections 32 --rounds 3 --json
