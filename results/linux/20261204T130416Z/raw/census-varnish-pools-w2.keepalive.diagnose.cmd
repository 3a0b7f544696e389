/work/main/bin/acceptlab-diagnose --port 42363 --load keepalive --connections 32 --rounds 3 --json
