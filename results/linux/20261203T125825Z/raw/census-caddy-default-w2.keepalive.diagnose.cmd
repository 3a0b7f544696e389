/work/main/bin/acceptlab-diagnose --port 35395 --load keepalive --connections 32 --rounds 3 --json
