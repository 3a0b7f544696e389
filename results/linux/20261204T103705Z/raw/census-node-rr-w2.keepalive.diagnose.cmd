/work/main/bin/acceptlab-diagnose --port 52325 --load keepalive --connections 32 --rounds 3 --json
