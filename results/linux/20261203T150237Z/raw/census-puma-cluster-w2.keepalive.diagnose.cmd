/work/main/bin/acceptlab-diagnose --port 35715 --load keepalive --connections 32 --rounds 3 --json
