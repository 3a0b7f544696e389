/work/main/bin/acceptlab-diagnose --port 38769 --load keepalive --connections 32 --rounds 3 --json
