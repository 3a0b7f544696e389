/work/main/bin/acceptlab-diagnose --port 45177 --load keepalive --connections 32 --rounds 3 --json
