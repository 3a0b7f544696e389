/work/main/bin/acceptlab-diagnose --port 43105 --load keepalive --connections 32 --rounds 3 --json
