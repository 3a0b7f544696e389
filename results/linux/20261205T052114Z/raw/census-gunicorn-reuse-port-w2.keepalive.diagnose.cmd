/work/main/bin/acceptlab-diagnose --port 57617 --load keepalive --connections 32 --rounds 3 --json
