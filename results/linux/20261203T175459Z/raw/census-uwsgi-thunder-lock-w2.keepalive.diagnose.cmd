/work/main/bin/acceptlab-diagnose --port 40093 --load keepalive --connections 32 --rounds 3 --json
