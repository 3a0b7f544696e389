/work/main/bin/acceptlab-diagnose --port 42471 --load keepalive --connections 32 --rounds 3 --json
