/work/main/bin/acceptlab-diagnose --port 40921 --load keepalive --connections 32 --rounds 3 --json
