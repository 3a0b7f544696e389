/work/main/bin/acceptlab-diagnose --port 33853 --load keepalive --connections 32 --rounds 3 --json
