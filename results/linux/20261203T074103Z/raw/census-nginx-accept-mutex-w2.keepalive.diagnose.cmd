/work/main/bin/acceptlab-diagnose --port 44143 --load keepalive --connections 32 --rounds 3 --json
