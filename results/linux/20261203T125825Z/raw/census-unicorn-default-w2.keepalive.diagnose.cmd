/work/main/bin/acceptlab-diagnose --port 53465 --load keepalive --connections 32 --rounds 3 --json
