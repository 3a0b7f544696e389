/work/main/bin/acceptlab-diagnose --port 41133 --load keepalive --connections 32 --rounds 3 --json
