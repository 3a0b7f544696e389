/work/main/bin/acceptlab-diagnose --port 49475 --load keepalive --connections 32 --rounds 3 --json
