/work/main/bin/acceptlab-diagnose --port 42107 --load keepalive --connections 32 --rounds 3 --json
