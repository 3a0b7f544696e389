/work/main/bin/acceptlab-diagnose --port 47767 --load keepalive --connections 32 --rounds 3 --json
