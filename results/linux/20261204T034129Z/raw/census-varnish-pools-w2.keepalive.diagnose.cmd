/work/main/bin/acceptlab-diagnose --port 34683 --load keepalive --connections 32 --rounds 3 --json
