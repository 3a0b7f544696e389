/work/main/bin/acceptlab-diagnose --port 33351 --load keepalive --connections 32 --rounds 3 --json
