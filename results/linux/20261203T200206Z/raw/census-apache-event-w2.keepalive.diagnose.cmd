/work/main/bin/acceptlab-diagnose --port 43685 --load keepalive --connections 32 --rounds 3 --json
