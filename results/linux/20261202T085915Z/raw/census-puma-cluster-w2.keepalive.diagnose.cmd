/work/main/bin/acceptlab-diagnose --port 58489 --load keepalive --connections 32 --rounds 3 --json
