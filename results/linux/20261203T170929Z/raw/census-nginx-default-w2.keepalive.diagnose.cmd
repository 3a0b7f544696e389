/work/main/bin/acceptlab-diagnose --port 43739 --load keepalive --connections 32 --rounds 3 --json
