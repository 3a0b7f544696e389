/work/main/bin/acceptlab-diagnose --port 37213 --load keepalive --connections 32 --rounds 3 --json
