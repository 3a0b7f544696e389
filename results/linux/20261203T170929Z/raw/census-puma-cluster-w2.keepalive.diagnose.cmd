/work/main/bin/acceptlab-diagnose --port 54067 --load keepalive --connections 32 --rounds 3 --json
