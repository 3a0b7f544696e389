/work/main/bin/acceptlab-diagnose --port 40363 --load keepalive --connections 32 --rounds 3 --json
