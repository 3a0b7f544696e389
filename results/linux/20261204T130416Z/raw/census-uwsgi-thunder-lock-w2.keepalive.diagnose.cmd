/work/main/bin/acceptlab-diagnose --port 43709 --load keepalive --connections 32 --rounds 3 --json
