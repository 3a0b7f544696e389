/work/main/bin/acceptlab-diagnose --port 41109 --load keepalive --connections 32 --rounds 3 --json
