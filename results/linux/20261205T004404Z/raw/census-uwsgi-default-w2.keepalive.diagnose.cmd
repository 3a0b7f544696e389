/work/main/bin/acceptlab-diagnose --port 52825 --load keepalive --connections 32 --rounds 3 --json
