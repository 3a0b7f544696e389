/work/main/bin/acceptlab-diagnose --port 58241 --load keepalive --connections 32 --rounds 3 --json
