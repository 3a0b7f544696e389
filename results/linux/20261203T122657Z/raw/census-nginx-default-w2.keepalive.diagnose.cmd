/work/main/bin/acceptlab-diagnose --port 54859 --load keepalive --connections 32 --rounds 3 --json
