/work/main/bin/acceptlab-diagnose --port 39315 --load keepalive --connections 32 --rounds 3 --json
