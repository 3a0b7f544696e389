/work/main/bin/acceptlab-diagnose --port 51707 --load keepalive --connections 32 --rounds 3 --json
