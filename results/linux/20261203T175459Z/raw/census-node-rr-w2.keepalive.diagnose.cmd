/work/main/bin/acceptlab-diagnose --port 40207 --load keepalive --connections 32 --rounds 3 --json
