/work/main/bin/acceptlab-diagnose --port 46791 --load keepalive --connections 32 --rounds 3 --json
