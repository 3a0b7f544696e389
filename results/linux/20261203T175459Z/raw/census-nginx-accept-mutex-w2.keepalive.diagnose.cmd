/work/main/bin/acceptlab-diagnose --port 50437 --load keepalive --connections 32 --rounds 3 --json
