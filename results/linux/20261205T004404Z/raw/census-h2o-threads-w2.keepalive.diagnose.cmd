/work/main/bin/acceptlab-diagnose --port 60819 --load keepalive --connections 32 --rounds 3 --json
