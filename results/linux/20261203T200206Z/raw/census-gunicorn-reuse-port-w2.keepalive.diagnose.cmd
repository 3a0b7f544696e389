/work/main/bin/acceptlab-diagnose --port 43549 --load keepalive --connections 32 --rounds 3 --json
