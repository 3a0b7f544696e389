/work/main/bin/acceptlab-diagnose --port 47269 --load keepalive --connections 32 --rounds 3 --json
